//===- fusion_bench.cpp - Fused CPU kernels vs their unfused sequences ----===//
//
// Each benchmark runs one fused kernel or the sequence of kernels it
// replaces on the same data, single task (task 0 of 1), for batch 1,
// 12 heads, head dim 32 (all-MiniLM-L6-v2) at seq 32, 128 and 512, with all
// keys valid (/full) and with half of them padded (/half):
//   BM_ScaleMaskSoftmax_{Fused,Unfused}: scale_mask_softmax vs scale, mask,
//     softmax on [1, 12, S, S] scores;
//   BM_Attention_{Fused,FusedPacked,Unfused}: attention on merged [1, S, 384]
//     q/k/v (or packed [1, S, 1152] qkv) vs split_heads x3, matmul_nt, scale,
//     mask, softmax, matmul_nn, merge_heads.
// The counter max_abs_diff is the largest difference between the fused and
// unfused outputs (all rows), computed once per benchmark.
//
//   fusion_bench [--benchmark_filter=Attention] [--benchmark_repetitions=5]
//
//===----------------------------------------------------------------------===//

#include "enc_kernels.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

using namespace enc_kernels;

namespace {

constexpr int kHeads = 12, kHeadDim = 32, kHidden = kHeads * kHeadDim;
const float kScale = 1.0f / std::sqrt(float(kHeadDim));

std::vector<float> randomVec(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// Max |a - b| over all elements.
double maxDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

void setLabel(benchmark::State &state, int64_t S, int32_t len) {
  state.SetLabel("S=" + std::to_string(S) +
                 (len == S ? " all keys" : " half padded"));
}

//===----------------------------------------------------------------------===//
// scale + mask + softmax on [1, 12, S, S]
//===----------------------------------------------------------------------===//

struct SmsData {
  int64_t S;
  int32_t len;
  std::vector<float> x, t1, t2, y;
  explicit SmsData(const benchmark::State &state)
      : S(state.range(0)), len(int32_t(state.range(1) ? S : S / 2)) {
    const size_t n = size_t(kHeads) * S * S;
    x = randomVec(n, 1, -8, 8);
    t1.resize(n);
    t2.resize(n);
    y.resize(n);
  }
  void fused() {
    scaleMaskSoftmax(x.data(), &len, y.data(), 1, kHeads * S, S, kScale, 0, 1);
  }
  void unfused() {
    const int64_t n = int64_t(kHeads) * S * S;
    scale(x.data(), t1.data(), n, kScale, 0, 1);
    mask(t1.data(), &len, t2.data(), 1, kHeads * S, S, 0, 1);
    softmax<0>(t2.data(), y.data(), kHeads * S, S, 0, 1);
  }
  double diff() {
    fused();
    std::vector<float> a = y;
    unfused();
    return maxDiff(a, y);
  }
};

void BM_ScaleMaskSoftmax_Fused(benchmark::State &state) {
  SmsData d(state);
  state.counters["max_abs_diff"] = d.diff();
  for (auto _ : state) {
    d.fused();
    benchmark::ClobberMemory();
  }
  setLabel(state, d.S, d.len);
}

void BM_ScaleMaskSoftmax_Unfused(benchmark::State &state) {
  SmsData d(state);
  state.counters["max_abs_diff"] = d.diff();
  for (auto _ : state) {
    d.unfused();
    benchmark::ClobberMemory();
  }
  setLabel(state, d.S, d.len);
}

//===----------------------------------------------------------------------===//
// attention on merged [1, S, 384] q/k/v
//===----------------------------------------------------------------------===//

struct AttnData {
  int64_t S;
  int32_t len;
  std::vector<float> q, k, v, qkv, y;
  std::vector<float> qh, kh, vh, scores, t1, t2, probs, ctx; // unfused temps
  explicit AttnData(const benchmark::State &state)
      : S(state.range(0)), len(int32_t(state.range(1) ? S : S / 2)) {
    const size_t n = size_t(S) * kHidden;
    q = randomVec(n, 2, -1, 1);
    k = randomVec(n, 3, -1, 1);
    v = randomVec(n, 4, -1, 1);
    qkv.resize(3 * n);
    for (int64_t s = 0; s < S; ++s)
      for (int c = 0; c < kHidden; ++c) {
        qkv[s * 3 * kHidden + c] = q[s * kHidden + c];
        qkv[s * 3 * kHidden + kHidden + c] = k[s * kHidden + c];
        qkv[s * 3 * kHidden + 2 * kHidden + c] = v[s * kHidden + c];
      }
    y.resize(n);
    qh.resize(n);
    kh.resize(n);
    vh.resize(n);
    ctx.resize(n);
    const size_t ns = size_t(kHeads) * S * S;
    scores.resize(ns);
    t1.resize(ns);
    t2.resize(ns);
    probs.resize(ns);
  }
  void fused() {
    attention<kHeads, kHeadDim>(q.data(), k.data(), v.data(), kHidden, &len,
                                y.data(), 1, S, kScale, 0, 1);
  }
  void fusedPacked() {
    attention<kHeads, kHeadDim>(qkv.data(), qkv.data() + kHidden,
                                qkv.data() + 2 * kHidden, 3 * kHidden, &len,
                                y.data(), 1, S, kScale, 0, 1);
  }
  void unfused() {
    const int64_t ns = int64_t(kHeads) * S * S;
    splitHeads<kHeads, kHeadDim>(q.data(), qh.data(), 1, S, 0, 1);
    splitHeads<kHeads, kHeadDim>(k.data(), kh.data(), 1, S, 0, 1);
    splitHeads<kHeads, kHeadDim>(v.data(), vh.data(), 1, S, 0, 1);
    matmulNT<kHeadDim>(qh.data(), kh.data(), scores.data(), kHeads, S, S,
                       kHeadDim, 0, 1);
    scale(scores.data(), t1.data(), ns, kScale, 0, 1);
    mask(t1.data(), &len, t2.data(), 1, kHeads * S, S, 0, 1);
    softmax<0>(t2.data(), probs.data(), kHeads * S, S, 0, 1);
    matmulNN<kHeadDim>(probs.data(), vh.data(), ctx.data(), kHeads, S,
                       kHeadDim, S, 0, 1);
    mergeHeads<kHeads, kHeadDim>(ctx.data(), y.data(), 1, S, 0, 1);
  }
  double diff() {
    fused();
    std::vector<float> a = y;
    fusedPacked();
    double d = maxDiff(a, y);
    unfused();
    return std::max(d, maxDiff(a, y));
  }
};

void BM_Attention_Fused(benchmark::State &state) {
  AttnData d(state);
  state.counters["max_abs_diff"] = d.diff();
  for (auto _ : state) {
    d.fused();
    benchmark::ClobberMemory();
  }
  setLabel(state, d.S, d.len);
}

void BM_Attention_FusedPacked(benchmark::State &state) {
  AttnData d(state);
  state.counters["max_abs_diff"] = d.diff();
  for (auto _ : state) {
    d.fusedPacked();
    benchmark::ClobberMemory();
  }
  setLabel(state, d.S, d.len);
}

void BM_Attention_Unfused(benchmark::State &state) {
  AttnData d(state);
  state.counters["max_abs_diff"] = d.diff();
  for (auto _ : state) {
    d.unfused();
    benchmark::ClobberMemory();
  }
  setLabel(state, d.S, d.len);
}

/// Args: {seq, all keys valid (1) or half padded (0)}.
void shapes(benchmark::internal::Benchmark *b) {
  for (int64_t S : {32, 128, 512})
    for (int64_t full : {1, 0})
      b->Args({S, full});
  b->ArgNames({"seq", "full"})->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ScaleMaskSoftmax_Fused)->Apply(shapes);
BENCHMARK(BM_ScaleMaskSoftmax_Unfused)->Apply(shapes);
BENCHMARK(BM_Attention_Fused)->Apply(shapes);
BENCHMARK(BM_Attention_FusedPacked)->Apply(shapes);
BENCHMARK(BM_Attention_Unfused)->Apply(shapes);

} // namespace

BENCHMARK_MAIN();
