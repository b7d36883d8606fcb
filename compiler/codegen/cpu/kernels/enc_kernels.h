//===- enc_kernels.h - CPU kernels of the enc ops -----------------*- C++ -*-===//
//
// One function per enc op, parameterised by the model's static dims. Each
// takes plain pointers and run-time sizes plus (task, numTasks) and computes
// the disjoint share [task/numTasks] of its output; the generated code wraps
// each instantiation in an exported `enc_kernel_fn` (encrt/kernel_abi.h).
//
// Layouts: activations row-major [B, S, H] (padded, S = run's seq) or, in
// packed plans, [tokens, H] (sequence b at rows [offsets[b], offsets[b+1]);
// row-wise kernels just get `tokens` rows), heads [B, heads, S, D], weights
// in HF layout. Padded positions get finite values
// (no NaN/inf can leak into valid rows) and nothing is read out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_H
#define ENC_KERNELS_H

#include "enc_attention.h"
#include "enc_common.h"
#include "enc_gemm.h"
#include "enc_sgemm.h"

namespace enc_kernels {

/// enc.embedding: y[b,s,:] = word[ids[b,s]] + pos[position] +
/// type[typeIds[b,s]] (type[0] when typeIds is null; T type rows), the
/// position s + offset or, with padId >= 0, positionRow()'s. Ids, type ids and
/// positions outside their tables are clamped. W: float, or uint16_t for a
/// bf16 word table (its rows widened exactly).
template <int H, typename W = float>
void embedding(const int32_t *ids, const int32_t *typeIds, const W *word,
               int64_t V, const float *pos, int64_t P, const float *type,
               int64_t T, float *y, int64_t B, int64_t S, int64_t offset,
               int64_t padId, int32_t task, int32_t numTasks) {
  int64_t t0, t1;
  taskShare(B * S, task, numTasks, t0, t1);
  for (int64_t t = t0; t < t1; ++t)
    embeddingRow<H>(ids[t], word, nullptr, V, pos, P, typeRow<H>(type, typeIds, T, t),
                    positionRow(ids + t / S * S, t % S, offset, padId), y + t * H);
}

/// enc.embedding, packed: row offsets[b] + s of y [tokens, H] gets
/// word[ids[b, s]] + pos[s + offset] + type[typeIds[b, s]] for s <
/// lengths[b]; ids and type ids stay padded [B, S]. Clamping as in
/// embedding().
template <int H, typename W = float>
void embeddingPacked(const int32_t *ids, const int32_t *typeIds,
                     const W *word, int64_t V, const float *pos, int64_t P,
                     const float *type, int64_t T, float *y,
                     const int32_t *offsets, int64_t B, int64_t S,
                     int64_t offset, int64_t padId, int32_t task, int32_t numTasks) {
  int64_t t0, t1;
  taskShare(offsets[B], task, numTasks, t0, t1);
  forEachPackedRow(offsets, B, t0, t1, [&](int64_t t, int64_t b, int64_t s) {
    embeddingRow<H>(ids[b * S + s], word, nullptr, V, pos, P,
                    typeRow<H>(type, typeIds, T, b * S + s), positionRow(ids + b * S, s, offset, padId),
                    y + t * H);
  });
}

/// enc.add over `count` elements.
inline void add(const float *a, const float *b, float *y, int64_t count,
                int32_t task, int32_t numTasks) {
  int64_t e0, e1;
  taskShare(count, task, numTasks, e0, e1);
  for (int64_t e = e0; e < e1; ++e)
    y[e] = a[e] + b[e];
}

/// enc.scale over `count` elements.
inline void scale(const float *x, float *y, int64_t count, float factor,
                  int32_t task, int32_t numTasks) {
  int64_t e0, e1;
  taskShare(count, task, numTasks, e0, e1);
  for (int64_t e = e0; e < e1; ++e)
    y[e] = x[e] * factor;
}

/// enc.div over `count` elements: y = x / divisor (a true division).
inline void divide(const float *x, float *y, int64_t count, float divisor,
                int32_t task, int32_t numTasks) {
  int64_t e0, e1;
  taskShare(count, task, numTasks, e0, e1);
  for (int64_t e = e0; e < e1; ++e)
    y[e] = x[e] / divisor;
}

/// enc.gelu over `count` elements (Mode: kGeluErf or kGeluTanh).
template <int Mode>
void geluAct(const float *x, float *y, int64_t count, int32_t task,
             int32_t numTasks) {
  int64_t e0, e1;
  taskShare(count, task, numTasks, e0, e1);
  for (int64_t e = e0; e < e1; ++e)
    y[e] = gelu<Mode>(x[e]);
}

enum RotaryLayout : int { kRotaryHalf = 0, kRotaryInterleaved = 1 };

namespace detail {
/// One token's row of enc.rotary at position `pos`: N heads of D dims, the
/// first R of each rotated in pairs (Layout), f32 angles as transformers
/// computes them: inv_freq = 1 / theta^(2f/R), angle = pos * inv_freq.
template <int N, int D, int R, int Layout>
ENC_INLINE void rotaryRow(const float *x, float *y, int64_t pos, float theta) {
  float c[R / 2], s[R / 2];
  for (int f = 0; f < R / 2; ++f) {
    const float inv = 1.0f / std::pow(theta, static_cast<float>(2 * f) / static_cast<float>(R));
    const float angle = static_cast<float>(pos) * inv;
    c[f] = std::cos(angle);
    s[f] = std::sin(angle);
  }
  for (int h = 0; h < N; ++h) {
    const float *xh = x + h * D;
    float *yh = y + h * D;
    for (int f = 0; f < R / 2; ++f) {
      const int i = Layout == kRotaryHalf ? f : 2 * f, j = Layout == kRotaryHalf ? f + R / 2 : 2 * f + 1;
      const float a = xh[i], b = xh[j];
      yh[i] = a * c[f] - b * s[f];
      yh[j] = b * c[f] + a * s[f];
    }
    for (int d = R; d < D; ++d)
      yh[d] = xh[d];
  }
}
} // namespace detail

/// enc.rotary: x [B, S, N*D] -> y, token s of each sequence at position s.
template <int N, int D, int R, int Layout>
void rotary(const float *x, float *y, int64_t B, int64_t S, float theta, int32_t task, int32_t numTasks) {
  int64_t t0, t1;
  taskShare(B * S, task, numTasks, t0, t1);
  for (int64_t t = t0; t < t1; ++t)
    detail::rotaryRow<N, D, R, Layout>(x + t * N * D, y + t * N * D, t % S, theta);
}

/// enc.rotary, packed: row offsets[b] + s of x [tokens, N*D] at position s.
template <int N, int D, int R, int Layout>
void rotaryPacked(const float *x, float *y, const int32_t *offsets, int64_t B, float theta, int32_t task,
                  int32_t numTasks) {
  int64_t t0, t1;
  taskShare(offsets[B], task, numTasks, t0, t1);
  forEachPackedRow(offsets, B, t0, t1, [&](int64_t t, int64_t, int64_t s) {
    detail::rotaryRow<N, D, R, Layout>(x + t * N * D, y + t * N * D, s, theta);
  });
}

enum GluKind : int { kGeglu = 0, kGegluTanh = 1, kSwiglu = 2 };

/// enc.glu: x [rows, 2I] -> y [rows, I], y[r, i] = act(x[r, i]) * x[r, I + i]
/// with act erf GELU, tanh GELU or SiLU (x / (1 + e^-x)). I = 0: `dim` at
/// run time.
template <int I, int Kind>
void glu(const float *x, float *y, int64_t rows, int64_t dim, int32_t task, int32_t numTasks) {
  const int64_t n = I > 0 ? I : dim;
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    const float *a = x + r * 2 * n, *g = a + n;
    float *yr = y + r * n;
    for (int64_t i = 0; i < n; ++i) {
      float act;
      if (Kind == kSwiglu)
        act = a[i] / (1.0f + fastExp(-a[i]));
      else
        act = gelu<Kind == kGegluTanh ? kGeluTanh : kGeluErf>(a[i]);
      yr[i] = act * g[i];
    }
  }
}

/// enc.tanh over `count` elements (std::tanh: a classification head's few
/// values, where accuracy matters more than speed).
inline void tanhAct(const float *x, float *y, int64_t count, int32_t task,
                    int32_t numTasks) {
  int64_t e0, e1;
  taskShare(count, task, numTasks, e0, e1);
  for (int64_t e = e0; e < e1; ++e)
    y[e] = std::tanh(x[e]);
}

/// enc.mask: x viewed as [B, R, Sk]; y = x except key j >= lengths[b] -> -inf.
inline void mask(const float *x, const int32_t *lengths, float *y, int64_t B,
                 int64_t R, int64_t Sk, int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(B * R, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / R;
    const int64_t len = std::min<int64_t>(std::max<int64_t>(lengths[b], 0), Sk);
    const float *xr = x + row * Sk;
    float *yr = y + row * Sk;
    for (int64_t j = 0; j < len; ++j)
      yr[j] = xr[j];
    for (int64_t j = len; j < Sk; ++j)
      yr[j] = -INFINITY;
  }
}

/// enc.softmax over rows of width W (WS > 0: static width; 0: `w`). A row
/// whose entries are all -inf becomes zeros.
template <int WS>
void softmax(const float *x, float *y, int64_t rows, int64_t w, int32_t task,
             int32_t numTasks) {
  const int64_t W = WS > 0 ? WS : w;
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = x + r * W;
    float *yr = y + r * W;
    const float mx = rowMax(xr, W);
    if (mx == -INFINITY) {
      for (int64_t j = 0; j < W; ++j)
        yr[j] = 0.0f;
      continue;
    }
    for (int64_t j = 0; j < W; ++j)
      yr[j] = fastExp(xr[j] - mx);
    const float sum = rowSum(yr, W);
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < W; ++j)
      yr[j] *= inv;
  }
}

/// enc.layernorm over rows of width H (biased variance).
template <int H>
void layerNorm(const float *x, const float *gamma, const float *beta, float *y,
               int64_t rows, float eps, int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r)
    layerNormRow<H>(x + r * H, gamma, beta, y + r * H, eps);
}

/// enc.rms_norm: each group of G contiguous floats (`groups` of them: the
/// rows times the groups per row) y = x / sqrt(mean(x^2) + eps) * gamma[G].
/// Sums of squares in eight f32 partial sums, then pairwise.
template <int G>
void rmsNorm(const float *x, const float *gamma, float *y, int64_t groups, float eps, int32_t task,
             int32_t numTasks) {
  static_assert(G > 0, "enc.rms_norm has a static group size");
  int64_t g0, g1;
  taskShare(groups, task, numTasks, g0, g1);
  for (int64_t g = g0; g < g1; ++g) {
    const float *xr = x + g * G;
    float *yr = y + g * G;
    float part[8] = {};
    int i = 0;
    for (; i + 8 <= G; i += 8)
      for (int l = 0; l < 8; ++l)
        part[l] += xr[i + l] * xr[i + l];
    for (; i < G; ++i)
      part[i % 8] += xr[i] * xr[i];
    const float sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
    const float inv = 1.0f / std::sqrt(sum / float(G) + eps);
    for (int j = 0; j < G; ++j)
      yr[j] = xr[j] * inv * gamma[j];
  }
}

/// enc.add_layernorm: y = layernorm(x + residual) over rows of width H; the
/// sum is written to y first and normalised in place.
template <int H>
void addLayerNorm(const float *x, const float *residual, const float *gamma,
                  const float *beta, float *y, int64_t rows, float eps,
                  int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r)
    addLayerNormRow<H>(x + r * H, residual + r * H, gamma, beta, y + r * H, eps);
}

/// enc.split: x [rows, Parts*N] -> ys[p] [rows, N] = columns [p*N, (p+1)*N).
template <int N, int Parts>
void split(const float *x, float *const *ys, int64_t rows, int32_t task,
           int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r)
    for (int p = 0; p < Parts; ++p)
      std::memcpy(ys[p] + r * N, x + (r * Parts + p) * N, sizeof(float) * N);
}

/// enc.l2norm over rows of width H: x / max(||x||, 1e-12).
template <int H>
void l2Norm(const float *x, float *y, int64_t rows, int32_t task,
            int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    const float *xr = x + r * H;
    float *yr = y + r * H;
    const float sq = rowSumSqDiff(xr, H, 0.0f);
    const float inv = 1.0f / std::max(std::sqrt(sq), 1e-12f);
    for (int64_t h = 0; h < H; ++h)
      yr[h] = xr[h] * inv;
  }
}

/// enc.split_heads: x [B, S, NH*D] -> y [B, NH, S, D].
template <int NH, int D>
void splitHeads(const float *x, float *y, int64_t B, int64_t S, int32_t task,
                int32_t numTasks) {
  int64_t t0, t1;
  taskShare(B * S, task, numTasks, t0, t1);
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t b = t / S, s = t % S;
    for (int64_t h = 0; h < NH; ++h)
      std::memcpy(y + ((b * NH + h) * S + s) * D, x + t * NH * D + h * D,
                  sizeof(float) * D);
  }
}

/// enc.merge_heads: x [B, NH, S, D] -> y [B, S, NH*D].
template <int NH, int D>
void mergeHeads(const float *x, float *y, int64_t B, int64_t S, int32_t task,
                int32_t numTasks) {
  int64_t t0, t1;
  taskShare(B * S, task, numTasks, t0, t1);
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t b = t / S, s = t % S;
    for (int64_t h = 0; h < NH; ++h)
      std::memcpy(y + t * NH * D + h * D, x + ((b * NH + h) * S + s) * D,
                  sizeof(float) * D);
  }
}

enum PoolMode : int { kPoolCls = 0, kPoolMean = 1, kPoolLast = 2, kPoolSplade = 3 };

namespace detail {
/// One pooled row from the `len` rows of xb [len, H]: cls = the first row
/// (zeros unless hasRow), mean = their average, last = the last of them,
/// splade = log(1 + relu(their maximum)) (all zeros when len <= 0).
template <int H, int Mode>
ENC_INLINE void poolRow(const float *xb, int64_t len, bool hasRow, float *yr) {
  if (Mode == kPoolCls) {
    for (int64_t h = 0; h < H; ++h)
      yr[h] = hasRow ? xb[h] : 0.0f;
    return;
  }
  if (Mode == kPoolLast) {
    for (int64_t h = 0; h < H; ++h)
      yr[h] = len > 0 ? xb[(len - 1) * H + h] : 0.0f;
    return;
  }
  if (Mode == kPoolSplade) { // max_s log1p(relu(x)) = log1p(relu(max_s x)): both are monotonic
    for (int64_t h = 0; h < H; ++h)
      yr[h] = 0.0f;
    for (int64_t s = 0; s < len; ++s)
      for (int64_t h = 0; h < H; ++h)
        yr[h] = std::max(yr[h], xb[s * H + h]);
    for (int64_t h = 0; h < H; ++h)
      yr[h] = std::log1p(yr[h]);
    return;
  }
  for (int64_t h = 0; h < H; ++h)
    yr[h] = 0.0f;
  for (int64_t s = 0; s < len; ++s)
    for (int64_t h = 0; h < H; ++h)
      yr[h] += xb[s * H + h];
  const float inv = len > 0 ? 1.0f / static_cast<float>(len) : 0.0f;
  for (int64_t h = 0; h < H; ++h)
    yr[h] *= inv;
}
} // namespace detail

/// enc.pool: x [B, S, H] -> y [B, H]; cls = token 0, mean = average of the
/// first lengths[b] tokens, last = token lengths[b] - 1 (lengths clamped to
/// [0, S]; no valid token -> zeros).
template <int H, int Mode>
void pool(const float *x, const int32_t *lengths, float *y, int64_t B,
          int64_t S, int32_t task, int32_t numTasks) {
  int64_t b0, b1;
  taskShare(B, task, numTasks, b0, b1);
  for (int64_t b = b0; b < b1; ++b) {
    float *yr = y + b * H;
    const float *xb = x + b * S * H;
    const int64_t len =
        Mode == kPoolCls ? 0 : std::min<int64_t>(std::max<int64_t>(lengths[b], 0), S);
    detail::poolRow<H, Mode>(xb, len, S > 0, yr);
  }
}

/// enc.pool, packed: x [tokens, H] (sequence b at rows [offsets[b],
/// offsets[b+1])) -> y [B, H]; cls = the sequence's first row, mean = the
/// average of its rows, last = its last row (an empty sequence gives zeros).
template <int H, int Mode>
void poolPacked(const float *x, const int32_t *offsets, float *y, int64_t B,
                int32_t task, int32_t numTasks) {
  int64_t b0, b1;
  taskShare(B, task, numTasks, b0, b1);
  for (int64_t b = b0; b < b1; ++b) {
    float *yr = y + b * H;
    const int64_t first = offsets[b], len = offsets[b + 1] - offsets[b];
    const float *xb = x + first * H;
    detail::poolRow<H, Mode>(xb, len, len > 0, yr);
  }
}

} // namespace enc_kernels

#endif // ENC_KERNELS_H
