//===- CudaSession.h - Running the CUDA plan of a loaded model ------------===//
//
// A CUDA session owns one stream, a device arena placed by the memory plan
// (planArena over the CudaPlan's live ranges; DIM_TOKENS = sum(lengths)),
// device and pinned host buffers for ids, lengths, offsets and the outputs,
// and a cuBLASLt workspace. run() copies the inputs in, launches every step
// (kernels through the launch header, GEMMs through cuBLASLt), copies the
// outputs back and scatters packed hidden rows to the caller's padded
// layout. Without profiling, the first run of a shape (batch, seq, tokens,
// hidden wanted) launches directly and then captures the sequence as a CUDA
// graph that later runs of that shape replay (small LRU cache); with
// profiling, steps always launch directly and are timed with events.
// A GEMM step's cuBLASLt algorithm comes from the model's GemmAlgoCache, or
// is chosen on the first run of its shape (timing cuBLASLt's best candidates).
// A DeviceSession, like Session. Not thread-safe: one session per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUDASESSION_H
#define ENCRT_CUDA_CUDASESSION_H

#include "DeviceSession.h"
#include "LoadedModel.h"
#include "MemoryPlan.h"
#include "cuda/CublasLtApi.h"
#include "cuda/CudaApi.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace encrt::rt::cuda {

class CudaModel;

class CudaSession final : public DeviceSession {
public:
  CudaSession(std::shared_ptr<const LoadedModel> model, bool profiling);
  ~CudaSession();
  CudaSession(const CudaSession &) = delete;
  CudaSession &operator=(const CudaSession &) = delete;

  const LoadedModel &model() const override { return *model_; }

  /// Throws Failure. See encrt_session_run.
  void run(const int32_t *ids, const int32_t *typeIds, const int32_t *lengths,
           int64_t batch, int64_t seq, float *outHidden,
           float *outPooled) override;

  bool profiling() const override { return profiling_; }
  const std::vector<StepProfile> &profile() const override { return profile_; }
  /// Device arena bytes currently reserved.
  uint64_t arenaBytes() const override { return arenaCapacity_; }

private:
  struct Key {
    int64_t batch = 0, seq = 0, tokens = 0;
    bool hidden = false;
    bool operator==(const Key &o) const {
      return batch == o.batch && seq == o.seq && tokens == o.tokens &&
             hidden == o.hidden;
    }
  };
  struct CachedGraph {
    Key key;
    CUgraphExec exec = nullptr;
    uint64_t lastUse = 0;
  };
  struct Gemm {
    int64_t rows = -1;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  /// A GEMM step's device operands and scale factors for one run.
  struct GemmOperands {
    const void *alpha = nullptr, *beta = nullptr, *w = nullptr, *x = nullptr;
    void *y = nullptr;
  };
  /// Byte offsets of one run's pieces in the io buffers.
  struct IoLayout {
    uint64_t ids = 0, typeIds = 0, lengths = 0, offsets = 0, deviceBytes = 0;
    uint64_t hidden = 0, hiddenBytes = 0, pooled = 0, pooledBytes = 0,
             hostBytes = 0;
  };

  uint64_t valueBytes(const encm::Value &value, const Key &k) const;
  void plan(const Key &k);
  void enqueue(const Key &k, bool timed);
  void launchKernel(uint32_t s, const Key &k);
  void runGemm(uint32_t s, const Key &k);
  cublasStatus_t runMatmul(const Gemm &g, const cublasLtMatmulAlgo_t &algo, const GemmOperands &o);
  /// Whether `algo` runs g's descriptors within the workspace.
  bool algoFits(const Gemm &g, const cublasLtMatmulAlgo_t &algo) const;
  /// cuBLASLt's heuristic for g; with tuning (the default; ENCRT_CUDA_GEMM_TUNE=0
  /// turns it off) its best 8 candidates timed on this run's operands and the
  /// fastest taken. Throws when cuBLASLt has none.
  cublasLtMatmulAlgo_t chooseAlgo(const Gemm &g, const GemmOperands &o, const std::string &what);
  void destroyGemm(Gemm &g);
  void clearGraphs();
  CUgraphExec capture(const Key &k);

  std::shared_ptr<const LoadedModel> model_;
  const CudaModel *cm_;
  const CudaDriver *d_;
  bool profiling_;
  bool useGraphs_;
  bool tuneGemms_;
  CUevent tuneEvents_[2] = {nullptr, nullptr};
  std::vector<StepProfile> profile_;
  std::vector<CUevent> events_; ///< profiling: before step 0, after each step

  CUstream stream_ = nullptr;
  CUdeviceptr arena_ = 0, io_ = 0, workspace_ = 0;
  uint64_t arenaCapacity_ = 0, ioCapacity_ = 0, workspaceBytes_ = 0;
  uint8_t *host_ = nullptr; ///< pinned: inputs, then outputs
  uint64_t hostCapacity_ = 0;
  Key planned_;
  IoLayout ioLayout_;

  std::vector<uint32_t> arenaValues_;
  std::vector<ArenaRequest> requests_;
  std::vector<uint64_t> offsets_;
  std::vector<CUdeviceptr> valuePtrs_;
  std::vector<int32_t> hostOffsets_;
  std::vector<Gemm> gemms_;
  std::vector<CachedGraph> graphs_;
  uint64_t useCounter_ = 0;
};

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_CUDASESSION_H
