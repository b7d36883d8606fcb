//===- PlanEmulator.h - Runs a CUDA plan on the host (test only) -*- C++ -*-===//
//
// An independent host model of what libencrt + the generated kernels do with
// a CudaPlan: every step is executed from its kernel name's family, its
// operands, launch header and attributes exactly as encrt/cuda_kernel_abi.h
// and CudaCodegen.h document them, in float with the activation dtype's
// rounding on every stored activation. It checks the plan's data flow (operand
// order, attributes, packing) without a GPU; the kernels themselves are checked
// on a GPU by tests/cuda/attention_check.cu.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_CUDA_PLANEMULATOR_H
#define ENCC_TESTS_CUDA_PLANEMULATOR_H

#include "compiler/Plan.h"
#include "ir/WeightStore.h"

#include <cstdint>
#include <string>
#include <vector>

namespace encc::testing {

struct EmulatedOutputs {
  std::vector<float> hidden; ///< packed [tokens, H]
  std::vector<float> pooled; ///< [batch, H], empty without pooling
  std::string error;         ///< set when a step could not be interpreted
};

/// ids and typeIds: [batch, seq] row-major (right padded; typeIds only for a
/// plan with a type ids input), lengths: [batch].
EmulatedOutputs emulateCudaPlan(const Plan &plan, const mlir::enc::WeightStore &weights,
                                DType act, const std::vector<int32_t> &ids,
                                const std::vector<int32_t> &typeIds,
                                const std::vector<int32_t> &lengths, int64_t seq);

} // namespace encc::testing

#endif // ENCC_TESTS_CUDA_PLANEMULATOR_H
