//===- CudaModel.h - What a model loaded on a CUDA device owns ------------===//
//
// Once per model: the device's primary context, the weights of the CudaPlan
// uploaded once (a weight region several values share is uploaded once),
// the fatbin module with every step's function resolved, and the cuBLASLt
// handle (when the plan has GEMM steps). Immutable after load; sessions make
// the context current on their thread before each call.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUDAMODEL_H
#define ENCRT_CUDA_CUDAMODEL_H

#include "cuda/CublasLtApi.h"
#include "cuda/CudaApi.h"
#include "cuda/GemmAlgoCache.h"

#include "encrt/artifact_generated.h"

#include <memory>
#include <string>
#include <vector>

namespace encrt::rt {

class Artifact;

namespace cuda {

class CudaModel {
public:
  /// Throws Failure: ENCRT_UNSUPPORTED "no CUDA device: ..." when the
  /// driver or device `deviceIndex` is missing, otherwise a load error.
  static std::unique_ptr<CudaModel> load(const Artifact &artifact,
                                         int deviceIndex);
  /// Whether device `deviceIndex` can be used; `why` says why not.
  static bool probe(int deviceIndex, std::string &why);
  ~CudaModel();
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;

  const CudaDriver &driver() const { return *driver_; }
  /// Null when the plan has no GEMM steps.
  const CublasLt *lt() const { return lt_; }
  cublasLtHandle_t ltHandle() const { return ltHandle_; }
  /// The cuBLASLt algorithm of each GEMM shape, shared by the sessions.
  GemmAlgoCache &gemmAlgos() const { return gemmAlgos_; }
  const encm::CudaPlan &plan() const { return *plan_; }
  /// Makes the model's context current on the calling thread.
  void makeCurrent() const;
  /// "cuda:0 NVIDIA H200".
  const std::string &deviceName() const { return deviceName_; }
  /// The function of kernel step `step` (null for GEMM steps).
  CUfunction function(size_t step) const { return functions_[step]; }
  /// The device address of Weight value `id` (0 for other values).
  CUdeviceptr weight(uint32_t id) const { return weights_[id]; }

private:
  CudaModel() = default;

  const CudaDriver *driver_ = nullptr;
  const CublasLt *lt_ = nullptr;
  const encm::CudaPlan *plan_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool retained_ = false;
  CUmodule module_ = nullptr;
  CUdeviceptr weightBase_ = 0;
  cublasLtHandle_t ltHandle_ = nullptr;
  std::vector<CUfunction> functions_;
  std::vector<CUdeviceptr> weights_;
  std::string deviceName_;
  mutable GemmAlgoCache gemmAlgos_;
};

} // namespace cuda
} // namespace encrt::rt

#endif // ENCRT_CUDA_CUDAMODEL_H
