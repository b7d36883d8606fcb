//===- CpuCodegen.h - enc IR -> Plan + C++ source -> shared object -*- C++ -*-===//
//
// generateCpuCode walks `func.func @forward` and turns every enc op into one
// plan step whose kernel is an exported wrapper around an instantiation of a
// kernel template (cpu/kernels/*.h); identical instantiations share a symbol.
// buildCpuCodeObject compiles that source with the host C++ compiler into a
// shared object for one x86-64 level.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_CODEGEN_CPU_CPUCODEGEN_H
#define ENCC_COMPILER_CODEGEN_CPU_CPUCODEGEN_H

#include "compiler/Plan.h"
#include "compiler/codegen/CodegenUtil.h"
#include "ir/WeightStore.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace encc {

struct CpuCodegenResult {
  Plan plan;
  std::string source; ///< C++ translation unit exporting every step kernel
  /// Per-token values are [kDimTokens, ...] (artifact.fbs DIM_TOKENS): every
  /// op had a packed kernel. False: the padded [kDimBatch, kDimSeq, ...] plan.
  bool packed = false;
};

/// Plan + kernel source for `@forward` of `module`. Errors name the op and
/// its location (unsupported op, missing weight, shape mismatch). Adds the
/// packed form of every enc.qlinear weight "X" to `weights` as "Xpacked" if X
/// ends in ".q8", else "X.q8packed" (packWeightsQ8 of enc_qgemm.h: int32
/// column sums + 16x4 blocks, ISA-independent); the plan refers to that
/// instead of X, so the artifact carries only the packed form. Weights no
/// step reads are not in the plan. ui8 activations (enc.quantize) are stored
/// with rows of q8RowStride(K) bytes; an enc.quantize without static_scale
/// whose input comes from enc.layernorm / enc.add_layernorm is computed by
/// that step (op "enc.layernorm+enc.quantize", 3 results). The plan is
/// packed (CpuCodegenResult::packed) when every op of @forward supports it
/// and `allowPacked` (false: always the padded plan, e.g. to compare both).
llvm::Expected<CpuCodegenResult>
generateCpuCode(mlir::ModuleOp module, mlir::enc::WeightStore &weights,
                bool allowPacked = true);

/// Whether the CPU generator can lower every op of @forward with its
/// attributes (OpLoweringTable::whyNot); generateCpuCode asks first. One
/// error line naming the first op it cannot lower.
llvm::Error checkCpuLowerable(mlir::ModuleOp module);

enum class CpuLevel {
  X86_64_V2,
  X86_64_V3,
  X86_64_V4,
  Native,
  X86_64_V3_VNNI, ///< -march=x86-64-v3 -mavxvnni (int8: "avxvnni" path)
  X86_64_V4_VNNI, ///< -march=x86-64-v4 -mavx512vnni (int8: "avx512vnni" path)
  X86_64_V4_BF16, ///< -march=x86-64-v4 -mavx512bf16 (bf16 linears: vdpbf16ps)
  X86_64_V4_AMX,  ///< -march=x86-64-v4 -mavx512vnni -mavx512bf16 -mamx-tile -mamx-bf16
                  ///< -mamx-int8 (bf16 linears: tdpbf16ps, int8: tdpbusd tiles)
};

/// "x86-64-v2" | "x86-64-v3" | "x86-64-v3-vnni" | "x86-64-v4" |
/// "x86-64-v4-vnni" | "x86-64-v4-bf16" | "x86-64-v4-amx" | "native".
llvm::Expected<CpuLevel> parseCpuLevel(llvm::StringRef name);
/// The inverse of parseCpuLevel.
std::string cpuLevelName(CpuLevel level);
/// The ISA features a code object built for `level` needs, as the runtime
/// checks them (CodeObject.isa_features); empty for Native (the host
/// compiler's predefined macros decide those at build time).
std::vector<std::string> cpuLevelFeatures(CpuLevel level);

/// Compiles `source` for `level` in `workDir` (created if missing; the
/// kernel headers are written there from the copy embedded in this library)
/// with $CXX (default `c++`). target = "cpu-" + cpuLevelName(level).
llvm::Expected<CodeObject> buildCpuCodeObject(const std::string &source,
                                              CpuLevel level,
                                              const std::string &workDir);

/// The kernel headers and encrt/kernel_abi.h (generated EmbeddedKernels.cpp).
const std::vector<EmbeddedFile> &embeddedKernelFiles();

} // namespace encc

#endif // ENCC_COMPILER_CODEGEN_CPU_CPUCODEGEN_H
