//===- RandomWeights.cpp - Generated weights for --weights=random:SEED ----===//
//
// BERT's initialisation, cheaply: every matrix ~ N(0, 0.02) approximated by
// the sum of four 16-bit uniforms of one splitmix64 draw (Irwin-Hall, bounded
// at ~3.5 sigma), LayerNorm gammas 1, biases and betas 0. Each tensor has its
// own stream, seeded from (seed, FNV-1a of its name), so the result does not
// depend on the order tensors are generated in.
//
//===----------------------------------------------------------------------===//
#include "frontends/hf/HFImport.h"

#include <cmath>
#include <cstring>

using namespace encc;

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001B3ull;
  return h;
}

constexpr double kInitStd = 0.02;

} // namespace

mlir::enc::WeightStore encc::randomWeights(const ModelConfig &config, uint64_t seed) {
  mlir::enc::WeightStore store;
  // Sum of 4 uniforms on [0, 65535]: mean 2 * 65535, std 65536 / sqrt(3).
  const float scale = static_cast<float>(kInitStd / (65536.0 / std::sqrt(3.0)));
  for (const WeightSpec &spec : expectedWeights(config)) {
    auto t = mlir::enc::WeightTensor::allocate(mlir::enc::WeightType::F32, spec.shape);
    const int64_t n = t.numElements();
    float *out = t.mutableF32();
    const bool isBias = spec.name.size() > 5 && spec.name.compare(spec.name.size() - 5, 5, ".bias") == 0;
    if (spec.zeros) {
      // a part the model does not have (WeightSpec::zeros) stays zero
    } else if (spec.shape.size() == 1) {
      const float v = isBias ? 0.0f : 1.0f; // LayerNorm gamma 1; biases and betas 0
      for (int64_t i = 0; i < n; ++i)
        out[i] = v;
    } else {
      uint64_t state = seed ^ fnv1a(spec.name);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t r = splitmix64(state);
        int64_t sum = int64_t(r & 0xFFFF) + int64_t((r >> 16) & 0xFFFF) + int64_t((r >> 32) & 0xFFFF) +
                      int64_t(r >> 48);
        out[i] = static_cast<float>(sum - 2 * 65535) * scale;
      }
    }
    store.set(spec.name, std::move(t));
  }
  return store;
}
