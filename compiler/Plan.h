//===- Plan.h - The execution plan codegen produces and the writer stores -===//
//
// An in-memory mirror of the plan tables of runtime/schema/artifact.fbs:
// codegen fills it, ArtifactWriter serialises it. Value ids are indices into
// Plan::values. Shapes use the artifact's symbolic dims (kDimBatch, kDimSeq).
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_PLAN_H
#define ENCC_COMPILER_PLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace encc {

constexpr int64_t kDimBatch = -1;
constexpr int64_t kDimSeq = -2;
constexpr int64_t kDimTokens = -3; ///< sum(lengths): the batch packed (artifact.fbs)

enum class ValueKind : uint8_t { Input = 0, Weight = 1, Activation = 2, Output = 3 };
enum class DType : uint8_t { F32 = 0, I32 = 1, F16 = 2, BF16 = 3, I8 = 4, U8 = 5 };

struct PlanValue {
  std::string name; ///< Weight: WeightStore key; otherwise a debug name
  ValueKind kind = ValueKind::Activation;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int32_t firstStep = -1; ///< Activation/Output: step writing it
  int32_t lastStep = -1;  ///< Activation/Output: last step reading it
};

struct PlanStep {
  std::string kernel; ///< exported symbol in the code object
  std::string op;     ///< enc op name, e.g. "enc.linear"
  std::vector<uint32_t> operands; ///< inputs, then results
  uint32_t numResults = 1;
  std::vector<int64_t> iattrs;
  std::vector<float> fattrs;
};

struct Plan {
  std::vector<PlanValue> values;
  std::vector<PlanStep> steps;
  std::vector<uint32_t> inputs;  ///< [ids, lengths]
  std::vector<uint32_t> outputs; ///< [hidden, pooled?]
};

struct CodeObject {
  std::string target;                ///< e.g. "cpu-x86-64-v3"
  std::vector<std::string> features; ///< e.g. {"avx2", "fma"}
  std::vector<uint8_t> bytes;        ///< the shared object (cpu) or fatbin (cuda)
};

/// A CUDA plan (CudaPlan of artifact.fbs) with its fatbin.
struct CudaProgram {
  Plan plan;
  DType dtype = DType::F16; ///< activations and GEMM weights: F16 or BF16
  CodeObject fatbin;        ///< target "cuda"
};

} // namespace encc

#endif // ENCC_COMPILER_PLAN_H
