//===- enc_attention.h - Fused attention kernels ------------------*- C++ -*-===//
//
// scaleMaskSoftmax: softmax(scale * s) over the valid keys of each score row
// in one pass per row (padded keys written 0).
//
// attention: softmax(scale * q·kᵀ, keys j < len) · v per (sequence, head),
// reading q/k/v in place from the merged [B, S, ld] layout (head h at columns
// [h*D, (h+1)*D)) and writing the merged [B, S, NH*D] output. A unit of work
// is one (sequence, head, tile of 16 query rows); the rows are the lanes of
// two score vectors, so q·kᵀ needs no horizontal sums. Keys are visited in
// tiles of 64 (copied to contiguous buffers) with an online softmax (running
// max and sum per row, accumulators rescaled per tile); only keys j < len are
// read, and the S x S matrix never exists. Padded query rows (s >= len) are
// computed like valid ones (they attend to the valid keys), exactly as the
// unfused ops do. attentionPacked is the same on the packed [tokens, ld]
// layout (kernel_abi.h): only real query rows exist, so it does no padded work.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_ATTENTION_H
#define ENC_KERNELS_ATTENTION_H

#include "enc_common.h"

namespace enc_kernels {

/// enc.scale_mask_softmax: x viewed as [B, R, Sk]; y = softmax_j(scale * x)
/// over keys j < lengths[b] (clamped to [0, Sk]), 0 for the other keys and
/// for rows without a valid key.
inline void scaleMaskSoftmax(const float *x, const int32_t *lengths, float *y,
                             int64_t B, int64_t R, int64_t Sk, float scale,
                             int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(B * R, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / R;
    const int64_t len = std::min<int64_t>(std::max<int64_t>(lengths[b], 0), Sk);
    const float *xr = x + row * Sk;
    float *yr = y + row * Sk;
    // Scale and running max.
    v8f mv = splat8(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
      const v8f v = load8(xr + j) * scale;
      store8(yr + j, v);
      mv = max8(mv, v);
    }
    float mx = hmax8(mv);
    for (; j < len; ++j) {
      yr[j] = xr[j] * scale;
      mx = std::max(mx, yr[j]);
    }
    if (mx == -INFINITY) { // no valid key (or all -inf): zeros, like softmax
      for (j = 0; j < Sk; ++j)
        yr[j] = 0.0f;
      continue;
    }
    // Exponentials and their sum.
    v8f sv = splat8(0.0f);
    for (j = 0; j + 8 <= len; j += 8) {
      const v8f e = fastExp8(load8(yr + j) - mx);
      store8(yr + j, e);
      sv += e;
    }
    float sum = hsum8(sv);
    for (; j < len; ++j) {
      yr[j] = fastExp(yr[j] - mx);
      sum += yr[j];
    }
    const float inv = 1.0f / sum;
    for (j = 0; j + 8 <= len; j += 8)
      store8(yr + j, load8(yr + j) * inv);
    for (; j < len; ++j)
      yr[j] *= inv;
    for (j = len; j < Sk; ++j)
      yr[j] = 0.0f;
  }
}

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

} // namespace enc_kernels

#endif // ENC_KERNELS_ATTENTION_H
