//===- CudaCodegen.h - enc IR -> CudaPlan + .cu source -> fatbin -*- C++ -*-===//
//
// generateCudaCode walks `func.func @forward` of a fused module and builds the
// CUDA plan (always packed: per-token values are [kDimTokens, ...]) plus one
// .cu translation unit whose extern "C" __global__ kernels instantiate the
// templates of cuda/kernels/*.cuh with the model's static dims. Linear layers
// are GEMM steps run by the runtime through cuBLASLt (ENC_CUDA_GEMM_KERNEL);
// see runtime/include/encrt/cuda_kernel_abi.h for the launch header and the
// GEMM operand contract. buildCudaFatbin compiles the source with nvcc into
// one fatbin for a list of architectures.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_CODEGEN_CUDA_CUDACODEGEN_H
#define ENCC_COMPILER_CODEGEN_CUDA_CUDACODEGEN_H

#include "compiler/Plan.h"
#include "compiler/codegen/CodegenUtil.h"
#include "ir/WeightStore.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace encc {

/// Which kernel computes enc.attention (--cuda-attention).
enum class CudaAttentionKernel {
  Auto,        ///< tensor cores where the head dim is a multiple of 16, else CUDA cores
  TensorCores, ///< enc_cuda::attentionMma (mma.sync); a head dim not a multiple of 16 is an error
  CudaCores,   ///< enc_cuda::attention (fp32 FMA)
};

/// "auto" | "tensor-cores" | "cuda-cores"; anything else is an error.
llvm::Expected<CudaAttentionKernel> parseCudaAttentionKernel(llvm::StringRef name);

struct CudaCodegenOptions {
  DType dtype = DType::F16; ///< activations and GEMM weights: F16 or BF16
  CudaAttentionKernel attention = CudaAttentionKernel::Auto;
};

struct CudaCodegenResult {
  Plan plan;          ///< the CudaPlan's values/steps/inputs/outputs
  std::string source; ///< the .cu translation unit
};

/// CUDA plan + kernel source for `@forward` of `module` (the default, fused
/// pipeline; ops only the unfused pipeline produces are an error naming the
/// op and its location). Weights the plan reads are added to `weights`:
///   - "X.f16" / "X.bf16" (options.dtype): GEMM weights [N, K] and biases,
///     the word (if f32), position and token-type tables;
///   - f32 under their own names: LayerNorm gamma/beta, int8 weight scales
///     ("X.q8scale", "...word_embeddings.weight.q8scale") and qlinear biases;
///   - i8 under their own names: qlinear weights "X.q8" [N, K] (symmetric per
///     row, used unpacked by the int8 GEMM) and an int8 word table.
/// Values: inputs [ids i32 [B, S], lengths i32 [B]]; per-token activations
/// [kDimTokens, N] of options.dtype, int8 activations I8 [kDimTokens, K] with
/// F32 scales [kDimTokens], int32 GEMM results I32 [kDimTokens, N]; outputs
/// [hidden f32 [kDimTokens, H], pooled f32 [kDimBatch, H] if the model pools].
/// Whether the CUDA generator can lower every op of @forward with its
/// attributes (OpLoweringTable::whyNot); generateCudaCode asks first. One
/// error line naming the first op it cannot lower.
llvm::Error checkCudaLowerable(mlir::ModuleOp module);

llvm::Expected<CudaCodegenResult> generateCudaCode(mlir::ModuleOp module,
                                                   mlir::enc::WeightStore &weights,
                                                   const CudaCodegenOptions &options);

/// nvcc: $NVCC if set, else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc.
llvm::Expected<std::string> findNvcc();

/// {"sm_80", "sm_86", "sm_89", "sm_90", "compute_90"}.
const std::vector<std::string> &defaultCudaArchs();

/// "sm_80,sm_90,compute_90" -> the list. Each entry is sm_XY or compute_XY
/// with XY >= 80 (an optional a/f suffix is kept, e.g. sm_90a); empty
/// entries, duplicates and anything else are an error.
llvm::Expected<std::vector<std::string>> parseCudaArchs(llvm::StringRef commaList);

/// Writes the kernel headers and `source` to `workDir` (created if missing)
/// and runs nvcc -fatbin with one -gencode per arch (sm_XY: SASS,
/// compute_XY: PTX). target = "cuda", features = archs. Checks the fatbin
/// magic. $ENCC_NVCC_FLAGS adds flags (space separated).
llvm::Expected<CodeObject> buildCudaFatbin(const std::string &source,
                                           const std::vector<std::string> &archs,
                                           const std::string &workDir);

/// cuda/kernels/*.cuh and encrt/cuda_kernel_abi.h (generated at build time).
const std::vector<EmbeddedFile> &embeddedCudaKernelFiles();

/// Launch-header helpers (exposed for tests).
std::vector<int64_t> cudaLaunchHeader(int64_t gridKind, int64_t threads, int64_t dynamicSmem,
                                      int64_t p0, int64_t p1);

} // namespace encc

#endif // ENCC_COMPILER_CODEGEN_CUDA_CUDACODEGEN_H
