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
//   BM_AttnKernel<D, new>: the attention kernel before issue 5 (copied here
//     as old_attention) vs the current one, attentionPacked on packed qkv
//     [B*S, 3*12*D], 12 heads, D = 32 (MiniLM) and 64 (BERT-base), S = 128,
//     all keys valid, batch 1 and 8, 1 task or 2 tasks on two threads. The
//     old/new time ratio is the speedup (same process, same data);
//     max_abs_diff_vs_old compares their outputs.
//
//   fusion_bench [--benchmark_filter=Attention] [--benchmark_repetitions=5]
//   fusion_bench --benchmark_filter=AttnKernel --benchmark_repetitions=5 \
//     --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "enc_kernels.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <thread>
#include <vector>

// The attention kernel before issue 5 (16-row query tiles, 64-key tiles
// copied per unit), kept to measure the new one against it in one process.
namespace enc_kernels {
namespace old_attention {

namespace detail {

constexpr int kAttnRowVectors = 2; // query rows per unit = 8 x this
constexpr int kAttnKeyTile = 64;   // keys per online-softmax step

/// acc[r] = acc[r] * alpha[r] + sum_j p[j][r] * v[j] for rows r < nq, where
/// p is [nk][QT] (row r at p[j*QT + r]) and v rows are D floats `ld` apart.
template <int D, int QT>
ENC_INLINE void attnAccumulate(float (&acc)[QT][D], const float *p,
                               const float *alpha, const float *v, int64_t ld,
                               int nk, int nq) {
  if constexpr (D % 8 == 0) {
    // Two rows x up to 32 columns per pass: 8 accumulators in registers,
    // each v vector loaded once for both rows.
    constexpr int DC = D % 32 == 0 ? 32 : D % 16 == 0 ? 16 : 8;
    constexpr int NV = DC / 8;
    int r = 0;
    for (; r + 2 <= nq; r += 2)
      for (int d0 = 0; d0 < D; d0 += DC) {
        v8f a0[NV], a1[NV];
        for (int i = 0; i < NV; ++i) {
          a0[i] = load8(&acc[r][d0 + 8 * i]) * alpha[r];
          a1[i] = load8(&acc[r + 1][d0 + 8 * i]) * alpha[r + 1];
        }
        for (int j = 0; j < nk; ++j) {
          const float *vj = v + j * ld + d0;
          const float p0 = p[j * QT + r], p1 = p[j * QT + r + 1];
          for (int i = 0; i < NV; ++i) {
            const v8f vv = load8(vj + 8 * i);
            a0[i] += p0 * vv;
            a1[i] += p1 * vv;
          }
        }
        for (int i = 0; i < NV; ++i) {
          store8(&acc[r][d0 + 8 * i], a0[i]);
          store8(&acc[r + 1][d0 + 8 * i], a1[i]);
        }
      }
    if (r < nq)
      for (int d0 = 0; d0 < D; d0 += DC) {
        v8f a0[NV];
        for (int i = 0; i < NV; ++i)
          a0[i] = load8(&acc[r][d0 + 8 * i]) * alpha[r];
        for (int j = 0; j < nk; ++j) {
          const float *vj = v + j * ld + d0;
          const float p0 = p[j * QT + r];
          for (int i = 0; i < NV; ++i)
            a0[i] += p0 * load8(vj + 8 * i);
        }
        for (int i = 0; i < NV; ++i)
          store8(&acc[r][d0 + 8 * i], a0[i]);
      }
  } else {
    for (int r = 0; r < nq; ++r)
      for (int d = 0; d < D; ++d) {
        float a = acc[r][d] * alpha[r];
        for (int j = 0; j < nk; ++j)
          a += p[j * QT + r] * v[j * ld + d];
        acc[r][d] = a;
      }
  }
}

/// One unit: nq (<= 8*QV) query rows at q (rows `ld` apart) against keys and
/// values [0, len) at k and v; output rows at y, `ldy` apart. Query row r is
/// lane r % 8 of score vector r / 8.
template <int D, int QV>
void attentionTile(const float *q, const float *k, const float *v, int64_t ld,
                   float *y, int64_t ldy, int nq, int64_t len, float scale) {
  constexpr int QT = 8 * QV, KT = kAttnKeyTile;
  constexpr int KB = 8 / QV; // keys per scores step: KB*QV accumulators
  alignas(32) float qT[D * QT]; // qT[d*QT + r] = scale * q[r][d]; r >= nq: 0
  for (int d = 0; d < D; ++d)
    for (int r = 0; r < QT; ++r)
      qT[d * QT + r] = r < nq ? q[r * ld + d] * scale : 0.0f;
  alignas(32) float acc[QT][D];
  for (int r = 0; r < QT; ++r)
    for (int d = 0; d < D; ++d)
      acc[r][d] = 0.0f;
  alignas(32) float p[KT * QT]; // scores, then probabilities: p[j*QT + r]
  alignas(32) float alpha[QT];
  v8f m[QV], l[QV];
  for (int w = 0; w < QV; ++w) {
    m[w] = splat8(-INFINITY);
    l[w] = splat8(0.0f);
  }

  // The key tile's k and v rows, copied to contiguous buffers: rows `ld`
  // apart (ld = 3H for packed qkv) would map k and v onto few cache sets.
  alignas(32) float kbuf[KT * D], vbuf[KT * D];
  for (int64_t j0 = 0; j0 < len; j0 += KT) {
    const int nk = static_cast<int>(std::min<int64_t>(KT, len - j0));
    for (int jj = 0; jj < nk; ++jj) {
      std::memcpy(kbuf + jj * D, k + (j0 + jj) * ld, sizeof(float) * D);
      std::memcpy(vbuf + jj * D, v + (j0 + jj) * ld, sizeof(float) * D);
    }
    const float *kt = kbuf;
    // Scores of KB keys at a time: QV qT loads, KB broadcasts and KB*QV
    // FMAs per d.
    int j = 0;
    for (; j + KB <= nk; j += KB) {
      const float *k0 = kt + j * D;
      v8f s[KB][QV];
      for (int c = 0; c < KB; ++c)
        for (int w = 0; w < QV; ++w)
          s[c][w] = splat8(0.0f);
      for (int d = 0; d < D; ++d) {
        v8f qd[QV];
        for (int w = 0; w < QV; ++w)
          qd[w] = load8(qT + d * QT + 8 * w);
        for (int c = 0; c < KB; ++c) {
          const float kv = k0[c * D + d];
          for (int w = 0; w < QV; ++w)
            s[c][w] += qd[w] * kv;
        }
      }
      for (int c = 0; c < KB; ++c)
        for (int w = 0; w < QV; ++w)
          store8(p + (j + c) * QT + 8 * w, s[c][w]);
    }
    for (; j < nk; ++j) {
      const float *kj = kt + j * D;
      v8f s[QV];
      for (int w = 0; w < QV; ++w)
        s[w] = splat8(0.0f);
      for (int d = 0; d < D; ++d)
        for (int w = 0; w < QV; ++w)
          s[w] += load8(qT + d * QT + 8 * w) * kj[d];
      for (int w = 0; w < QV; ++w)
        store8(p + j * QT + 8 * w, s[w]);
    }
    // Online softmax, vectorised over the query rows.
    for (int w = 0; w < QV; ++w) {
      float *pw = p + 8 * w;
      v8f tmax = load8(pw);
      for (j = 1; j < nk; ++j)
        tmax = max8(tmax, load8(pw + j * QT));
      const v8f mNew = max8(m[w], tmax);
      const v8f a = fastExp8(m[w] - mNew); // 0 on the first tile (m = -inf)
      v8f sum = splat8(0.0f);
      for (j = 0; j < nk; ++j) {
        const v8f e = fastExp8(load8(pw + j * QT) - mNew);
        store8(pw + j * QT, e);
        sum += e;
      }
      l[w] = l[w] * a + sum;
      m[w] = mNew;
      store8(alpha + 8 * w, a);
    }
    attnAccumulate<D, QT>(acc, p, alpha, vbuf, D, nk, nq);
  }
  alignas(32) float lv[QT];
  for (int w = 0; w < QV; ++w)
    store8(lv + 8 * w, l[w]);
  for (int r = 0; r < nq; ++r) {
    const float inv = lv[r] > 0.0f ? 1.0f / lv[r] : 0.0f; // len == 0: zeros
    for (int d = 0; d < D; ++d)
      y[r * ldy + d] = acc[r][d] * inv;
  }
}

} // namespace detail

/// enc.attention in the merged layout: q, k, v point at the first element
/// of their [B, S, ld] views (ld = NH*D for three inputs; packed qkv:
/// ld = 3*NH*D, k = q + NH*D, v = q + 2*NH*D); y is [B, S, NH*D].
/// y[b,s,h*D+d] = sum_{j < len_b} softmax_j(scale * <q_s, k_j>) v[j][d]
/// (len_b = lengths[b] clamped to [0, S]; len_b == 0 gives zeros). Work
/// units: (b, h, 16-row query tile), contiguous per task.
template <int NH, int D>
void attention(const float *q, const float *k, const float *v, int64_t ld,
               const int32_t *lengths, float *y, int64_t B, int64_t S,
               float scale, int32_t task, int32_t numTasks) {
  constexpr int QV = detail::kAttnRowVectors, QT = 8 * QV;
  const int64_t tiles = (S + QT - 1) / QT;
  const int64_t ldy = int64_t(NH) * D;
  int64_t u0, u1;
  taskShare(B * NH * tiles, task, numTasks, u0, u1);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t b = u / (NH * tiles), h = (u / tiles) % NH;
    const int64_t i0 = (u % tiles) * QT;
    const int nq = static_cast<int>(std::min<int64_t>(QT, S - i0));
    const int64_t len = std::min<int64_t>(std::max<int64_t>(lengths[b], 0), S);
    const int64_t col = h * D;
    detail::attentionTile<D, QV>(q + (b * S + i0) * ld + col,
                                 k + b * S * ld + col, v + b * S * ld + col,
                                 ld, y + (b * S + i0) * ldy + col, ldy, nq,
                                 len, scale);
  }
}

/// enc.attention on the packed layout: q, k, v point at the first element
/// of their [tokens, ld] views (ld as in attention()); sequence b's rows are
/// [offsets[b], offsets[b+1]) for queries, keys and values alike; y is
/// [tokens, NH*D]. Work units: (b, h, 16-row query tile) over the real
/// queries only (ceil(len_b / 16) tiles per head), contiguous per task.
template <int NH, int D>
void attentionPacked(const float *q, const float *k, const float *v,
                     int64_t ld, const int32_t *offsets, float *y, int64_t B,
                     float scale, int32_t task, int32_t numTasks) {
  constexpr int QV = detail::kAttnRowVectors, QT = 8 * QV;
  const int64_t ldy = int64_t(NH) * D;
  auto tilesOf = [&](int64_t b) {
    return (int64_t(offsets[b + 1]) - offsets[b] + QT - 1) / QT;
  };
  int64_t total = 0;
  for (int64_t b = 0; b < B; ++b)
    total += NH * tilesOf(b);
  int64_t u0, u1;
  taskShare(total, task, numTasks, u0, u1);
  // Find the sequence holding unit u0, then walk the units in order.
  int64_t b = 0, first = 0; // first: index of sequence b's first unit
  while (b < B && first + NH * tilesOf(b) <= u0)
    first += NH * tilesOf(b++);
  for (int64_t u = u0; u < u1; ++u) {
    int64_t tiles = tilesOf(b);
    while (u >= first + NH * tiles) {
      first += NH * tiles;
      tiles = tilesOf(++b);
    }
    const int64_t local = u - first, h = local / tiles;
    const int64_t i0 = (local % tiles) * QT;
    const int64_t row0 = offsets[b], len = int64_t(offsets[b + 1]) - row0;
    const int nq = static_cast<int>(std::min<int64_t>(QT, len - i0));
    const int64_t col = h * D;
    detail::attentionTile<D, QV>(q + (row0 + i0) * ld + col,
                                 k + row0 * ld + col, v + row0 * ld + col, ld,
                                 y + (row0 + i0) * ldy + col, ldy, nq, len,
                                 scale);
  }
}


} // namespace old_attention
} // namespace enc_kernels

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

//===----------------------------------------------------------------------===//
// old vs new attention kernel on packed qkv [B*S, 3*NH*D] (the model's
// layout), 12 heads, all keys valid, 1 or 2 tasks
//===----------------------------------------------------------------------===//

/// Runs f(task) for tasks 0 and 1: task 1 on a helper thread that spins
/// between calls, task 0 on the calling thread.
class TaskPair {
public:
  TaskPair() : helper_([this] { loop(); }) {}
  ~TaskPair() {
    stop_ = true;
    gen_.fetch_add(1);
    helper_.join();
  }
  void run(const std::function<void(int32_t)> &f) {
    f_ = &f;
    done_.store(false);
    gen_.fetch_add(1);
    f(0);
    while (!done_.load())
      std::this_thread::yield();
  }

private:
  void loop() {
    int64_t seen = 0;
    for (;;) {
      while (gen_.load() == seen)
        std::this_thread::yield();
      seen = gen_.load();
      if (stop_)
        return;
      (*f_)(1);
      done_.store(true);
    }
  }
  std::atomic<int64_t> gen_{0};
  std::atomic<bool> done_{false}, stop_{false};
  const std::function<void(int32_t)> *f_ = nullptr;
  std::thread helper_;
};

template <int D> struct CmpData {
  static constexpr int NH = 12, H = NH * D;
  int64_t S, B;
  float sc = 1.0f / std::sqrt(float(D));
  std::vector<float> qkv, y;
  std::vector<int32_t> lengths, offsets;
  explicit CmpData(const benchmark::State &state)
      : S(state.range(0)), B(state.range(1)) {
    qkv = randomVec(size_t(B * S) * 3 * H, 9, -1, 1);
    y.resize(size_t(B * S) * H);
    lengths.assign(B, int32_t(S));
    for (int64_t b = 0; b <= B; ++b)
      offsets.push_back(int32_t(b * S));
  }
  template <bool New> void run(int32_t task, int32_t numTasks) {
    const float *q = qkv.data();
    if constexpr (New)
      attentionPacked<NH, D>(q, q + H, q + 2 * H, 3 * H, offsets.data(), nullptr,
                             y.data(), B, sc, task, numTasks);
    else
      old_attention::attentionPacked<NH, D>(q, q + H, q + 2 * H, 3 * H,
                                            offsets.data(), y.data(), B, sc,
                                            task, numTasks);
  }
  double diff() {
    run<false>(0, 1);
    std::vector<float> a = y;
    run<true>(0, 1);
    return maxDiff(a, y);
  }
};

/// Args: {seq, batch, tasks}.
template <int D, bool New> void BM_AttnKernel(benchmark::State &state) {
  CmpData<D> d(state);
  state.counters["max_abs_diff_vs_old"] = d.diff();
  const int32_t tasks = int32_t(state.range(2));
  if (tasks == 1) {
    for (auto _ : state) {
      d.template run<New>(0, 1);
      benchmark::ClobberMemory();
    }
  } else {
    TaskPair pair;
    const std::function<void(int32_t)> f = [&](int32_t t) {
      d.template run<New>(t, 2);
    };
    for (auto _ : state) {
      pair.run(f);
      benchmark::ClobberMemory();
    }
  }
  const double flops = 4.0 * d.NH * D * double(d.S) * d.S * d.B;
  state.counters["GFLOPs"] = benchmark::Counter(
      flops * state.iterations() * 1e-9, benchmark::Counter::kIsRate);
  state.SetLabel(std::string(New ? "new" : "old") + " D=" + std::to_string(D));
}

void cmpShapes(benchmark::internal::Benchmark *b) {
  for (int64_t tasks : {1, 2})
    for (int64_t B : {1, 8})
      b->Args({128, B, tasks});
  b->ArgNames({"seq", "batch", "tasks"})->Unit(benchmark::kMicrosecond);
  b->UseRealTime();
}

/// One long sequence through ModernBERT-base's attention shape (12 heads of
/// 64, packed qkv), global (window -1) or local (window 64: 129 keys per
/// query). Args: {seq, window}. Local layers should cost S x window: the
/// time per token stays flat as S grows, where the global layer's grows.
void BM_AttentionWindow(benchmark::State &state) {
  constexpr int NH = 12, D = 64, H = NH * D;
  const int64_t S = state.range(0), w = state.range(1);
  const std::vector<float> qkv = randomVec(size_t(S) * 3 * H, 5, -1.0f, 1.0f);
  std::vector<float> y(size_t(S) * H);
  const int32_t offsets[2] = {0, int32_t(S)};
  for (auto _ : state) {
    attentionPacked<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, offsets, nullptr, y.data(), 1, 0.125f,
                           0, 1, RelativeBias{}, AttnBand{w, w});
    benchmark::ClobberMemory();
  }
  const double keys = w < 0 ? double(S) : std::min<double>(S, 2 * w + 1);
  state.counters["time_per_token"] =
      benchmark::Counter(double(S) * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["GFLOPs"] = benchmark::Counter(4.0 * NH * D * double(S) * keys * state.iterations() * 1e-9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttentionWindow)
    ->ArgsProduct({{512, 2048, 8192}, {-1, 64}})
    ->ArgNames({"seq", "window"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_TEMPLATE(BM_AttnKernel, 32, false)->Apply(cmpShapes);
BENCHMARK_TEMPLATE(BM_AttnKernel, 32, true)->Apply(cmpShapes);
BENCHMARK_TEMPLATE(BM_AttnKernel, 64, false)->Apply(cmpShapes);
BENCHMARK_TEMPLATE(BM_AttnKernel, 64, true)->Apply(cmpShapes);

} // namespace

BENCHMARK_MAIN();
