//===- CudaTestPlan.h - A CudaPlan for the runtime tests' model -----------===//
//
// Adds to TestModel's spec a small CudaPlan (embedding kernel into packed
// hidden rows [-3, H], then a pooling kernel) and a "cuda" code object whose
// bytes are not a real fatbin: enough for everything that runs before a
// device is touched (verification, device selection).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TESTS_CUDATESTPLAN_H
#define ENCRT_TESTS_CUDATESTPLAN_H

#include "ArtifactBuilder.h"
#include "encrt/cuda_kernel_abi.h"

#include <string>

namespace encrt::test {

inline void addCudaPlan(ArtifactSpec &s) {
  using K = encm::ValueKind;
  using D = encm::DType;
  const int64_t H = TestModel::kHidden, V = TestModel::kVocab;
  const uint64_t tableBytes = uint64_t(V) * H * 4;
  const uint64_t biasOffset = (tableBytes + 63) / 64 * 64;
  SpecCudaPlan c;
  c.values = {
      {"ids", K::Input, D::I32, {-1, -2}},
      {"lengths", K::Input, D::I32, {-1}},
      {"table", K::Weight, D::F32, {V, H}, 0, tableBytes},
      {"bias", K::Weight, D::F32, {H}, biasOffset, uint64_t(H) * 4},
      {"hidden", K::Output, D::F32, {-3, H}, 0, 0, 0, 1},
      {"pooled", K::Output, D::F32, {-1, H}, 0, 0, 1, 1},
  };
  c.steps = {
      {"test_cuda_embed", "enc.embedding", {0, 2, 3, 4}, 1,
       {ENC_CUDA_GRID_ROWS, 128, 0, 4, 0, H}, {}},
      {"test_cuda_pool", "enc.pool", {4, 5}, 1,
       {ENC_CUDA_GRID_BATCH, 32, 0, 1, 0, H}, {}},
  };
  c.inputs = {0, 1};
  c.outputs = {4, 5};
  c.codeObject = static_cast<uint32_t>(s.codes.size());
  std::string fake = "not a real fatbin";
  s.codes.push_back({"cuda", {"sm_80"}, {fake.begin(), fake.end()}});
  s.cuda = c;
}

/// Removes the CPU plan (a CUDA-only artifact).
inline void dropCpuPlan(ArtifactSpec &s) {
  s.values.clear();
  s.steps.clear();
  s.inputs.clear();
  s.outputs.clear();
}

} // namespace encrt::test

#endif // ENCRT_TESTS_CUDATESTPLAN_H
