//===- GemmAlgoCache.h - cuBLASLt algorithms chosen per GEMM shape --------===//
//
// The cuBLASLt algorithm each GEMM shape of a model runs with, shared by the
// model's sessions (thread-safe). A shape is the step's N, K, operand type
// and epilogue plus the power-of-two bucket of its row count (tokens), so the
// heuristic query and the tuning (CudaSession::chooseAlgo) happen once per
// bucket and shape, not once per token count and step: a BERT layer's four
// GEMM shapes are tuned once for all its layers, and a server whose batches
// all hold different token counts reuses them. An algorithm found here is
// checked (cublasLtMatmulAlgoCheck) against the actual row count before use.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_GEMMALGOCACHE_H
#define ENCRT_CUDA_GEMMALGOCACHE_H

#include "cuda/CublasLtApi.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace encrt::rt::cuda {

class GemmAlgoCache {
public:
  struct Key {
    int64_t n = 0, k = 0, epilogue = 0, rowsBucket = 0;
    int abType = 0; ///< cudaDataType_t of A and B
    bool operator<(const Key &o) const {
      return std::tie(n, k, epilogue, rowsBucket, abType) <
             std::tie(o.n, o.k, o.epilogue, o.rowsBucket, o.abType);
    }
  };

  /// The smallest power of two >= rows (at least 16).
  static int64_t bucket(int64_t rows);

  /// The algorithm stored for `key`, if any.
  bool find(const Key &key, cublasLtMatmulAlgo_t &algo) const;
  /// Stores `algo` unless `key` has one already; returns the stored one (so
  /// sessions that tuned the same shape at once agree on one algorithm).
  cublasLtMatmulAlgo_t insert(const Key &key, const cublasLtMatmulAlgo_t &algo);

private:
  mutable std::mutex mu_;
  std::map<Key, cublasLtMatmulAlgo_t> algos_;
};

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_GEMMALGOCACHE_H
