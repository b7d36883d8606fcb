//===- GemmAlgoCache.cpp - cuBLASLt algorithms chosen per GEMM shape ------===//
#include "cuda/GemmAlgoCache.h"

namespace encrt::rt::cuda {

int64_t GemmAlgoCache::bucket(int64_t rows) {
  int64_t b = 16;
  while (b < rows && b < (int64_t(1) << 40))
    b <<= 1;
  return b;
}

bool GemmAlgoCache::find(const Key &key, cublasLtMatmulAlgo_t &algo) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = algos_.find(key);
  if (it == algos_.end())
    return false;
  algo = it->second;
  return true;
}

cublasLtMatmulAlgo_t GemmAlgoCache::insert(const Key &key, const cublasLtMatmulAlgo_t &algo) {
  std::lock_guard<std::mutex> lock(mu_);
  return algos_.emplace(key, algo).first->second;
}

} // namespace encrt::rt::cuda
