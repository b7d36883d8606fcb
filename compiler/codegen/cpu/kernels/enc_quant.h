//===- enc_quant.h - Kernels of the int8 enc ops -------------------*- C++ -*-===//
//
// Thin step kernels over enc_qgemm.h (whose GEMM and quantisation formulas
// they reuse) for the ops of the quantize-linear-int8 pass:
//  - enc.quantize: rows of x -> u8 rows of stride q8RowStride(K) (padding
//    bytes = the zero point) + one scale per row; dynamic (per-row max) or a
//    static calibrated scale.
//  - layernorm / add_layernorm with the quantisation of their output fused in
//    (the float result is still written: the residual path needs it).
//  - enc.qlinear: qlinearQ8Quantized on pre-quantised rows, and with the
//    quantisation of its result fused in (the float result never stored),
//    or the residual LayerNorm (+ its quantisation) that reads its result.
//  - enc.embedding with an int8 word table (one f32 scale per row).
// Each takes (task, numTasks) and does a disjoint share of its output.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_QUANT_H
#define ENC_KERNELS_QUANT_H

#include "enc_common.h"
#include "enc_qgemm.h"

namespace enc_kernels {

/// One row with a fixed scale s > 0: q = clamp(rne(x / s) + 128, 0, 255).
ENC_INLINE void quantizeRowStaticQ8(const float *x, int64_t K, float s,
                                    uint8_t *q) {
  const float inv = 1.0f / s;
  for (int64_t k = 0; k < K; ++k) {
    const int v = static_cast<int>(std::nearbyint(x[k] * inv)) + 128;
    q[k] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
  }
}

/// Quantises row r of width K into q (stride q8RowStride(K)) and scales[r];
/// staticScale > 0 selects the static form.
template <int K>
ENC_INLINE void quantizeRowTo(const float *x, uint8_t *q, float *scale,
                              float staticScale) {
  if (staticScale > 0.0f) {
    quantizeRowStaticQ8(x, K, staticScale, q);
    *scale = staticScale;
  } else {
    quantizeRowQ8(x, K, q, scale);
  }
  for (int64_t k = K; k < q8RowStride(K); ++k)
    q[k] = static_cast<uint8_t>(kQ8ActZeroPoint);
}

/// enc.quantize: x [rows, K] -> q [rows, q8RowStride(K)], scales [rows].
template <int K>
void quantizeRows(const float *x, uint8_t *q, float *scales, int64_t rows,
                  float staticScale, int32_t task, int32_t numTasks) {
  const int64_t ldq = q8RowStride(K);
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r)
    quantizeRowTo<K>(x + r * K, q + r * ldq, scales + r, staticScale);
}

/// enc.layernorm + enc.quantize of its result (dynamic scales).
template <int H>
void layerNormQuantize(const float *x, const float *gamma, const float *beta,
                       float *y, uint8_t *q, float *scales, int64_t rows,
                       float eps, int32_t task, int32_t numTasks) {
  const int64_t ldq = q8RowStride(H);
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    layerNormRow<H>(x + r * H, gamma, beta, y + r * H, eps);
    quantizeRowTo<H>(y + r * H, q + r * ldq, scales + r, 0.0f);
  }
}

/// enc.add_layernorm + enc.quantize of its result (dynamic scales).
template <int H>
void addLayerNormQuantize(const float *x, const float *residual,
                          const float *gamma, const float *beta, float *y,
                          uint8_t *q, float *scales, int64_t rows, float eps,
                          int32_t task, int32_t numTasks) {
  const int64_t ldq = q8RowStride(H);
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    addLayerNormRow<H>(x + r * H, residual + r * H, gamma, beta, y + r * H, eps);
    quantizeRowTo<H>(y + r * H, q + r * ldq, scales + r, 0.0f);
  }
}

/// enc.qlinear: y [rows, N] = epilogue(dequant(xq · Wqᵀ) + b); xq rows of
/// stride q8RowStride(K), packed from packWeightsQ8, bias may be null.
template <int K, int N, int Epi>
void qlinear(const uint8_t *xq, const float *xScale, const void *packed,
             const float *wScale, const float *bias, float *y, int64_t rows,
             int32_t task, int32_t numTasks) {
  qlinearQ8Quantized<Epi>(xq, q8RowStride(K), xScale, rows, K, N, packed,
                          wScale, bias, nullptr, y, task, numTasks);
}

/// The driver of a qlinear that also computes its consumer: each task owns
/// rows [r0, r1) of the output and computes kQ8StageRows of them at a time
/// across all N columns (epilogue, + residual where not null) into the rows
/// at blockRows(i0) (row i at blockRows(i0) + (i - i0) * N), then hands the
/// block to finish(i0, i1, rows) while it is in cache.
template <int K, int N, int Epi, class BlockRows, class Finish>
ENC_INLINE void qlinearRowBlocks(const uint8_t *xq, const float *xScale, const void *packed, const float *wScale,
                                 const float *bias, const float *residual, int64_t rows, int32_t task,
                                 int32_t numTasks, BlockRows &&blockRows, Finish &&finish) {
  const int32_t *colSum = packedColSumsQ8(packed);
  const int8_t *blocks = packedBlocksQ8(packed, N);
  const int64_t ldx = q8RowStride(K);
  // Each task reads the whole weight for its rows: with a few rows each
  // (MiniLM 1 x 8 on 8 tasks: one row each) the weight streamed once per
  // task, through tiles that wait on their loads. So at most one task per
  // kQ8MinTaskRows rows; the others have nothing to do.
  const int32_t useful = static_cast<int32_t>(std::clamp<int64_t>(rows / kQ8MinTaskRows, 1, numTasks));
  if (task >= useful)
    return;
  int64_t r0, r1;
  taskShare(rows, task, useful, r0, r1);
  for (int64_t i0 = r0; i0 < r1; i0 += kQ8StageRows) {
    const int64_t i1 = std::min(r1, i0 + kQ8StageRows);
    float *y = blockRows(r0, i0);
    const float *res = residual ? residual + i0 * N : nullptr;
    q8Blocks(xq + i0 * ldx, ldx, i0, i1, blocks, N, K, 0, q8PaddedN(N) / 16,
             [&](int64_t i, int r, int64_t n0, int64_t n1, const int32_t *t, int64_t ldt) {
               q8Epilogue<Epi>(t, ldt, i - i0, r, n0, n1, N, xScale + i, colSum, wScale, bias, res, y);
             });
    finish(i0, i1, y);
  }
}

/// enc.qlinear + the dynamic enc.quantize of its result, the float result
/// used by nothing else (enc-form-fusion-groups groups them): the float rows
/// of a block are staged in the first rows of the task's share of `stage`
/// ([rows, N], the op's float result; its content afterwards is unspecified)
/// and quantised from there. Values and scales are bit-identical to qlinear
/// followed by quantizeRows (same epilogue, same quantizeRowQ8 on the same
/// floats).
template <int K, int N, int Epi>
void qlinearQuantize(const uint8_t *xq, const float *xScale, const void *packed, const float *wScale,
                     const float *bias, float *stage, uint8_t *q, float *qScale, int64_t rows, int32_t task,
                     int32_t numTasks) {
  const int64_t ldq = q8RowStride(N);
  qlinearRowBlocks<K, N, Epi>(
      xq, xScale, packed, wScale, bias, nullptr, rows, task, numTasks,
      [&](int64_t r0, int64_t) { return stage + r0 * N; },
      [&](int64_t i0, int64_t i1, const float *y) {
        for (int64_t i = i0; i < i1; ++i)
          quantizeRowTo<N>(y + (i - i0) * N, q + i * ldq, qScale + i, 0.0f);
      });
}

/// enc.qlinear + the enc.add_layernorm that is the only user of its result
/// (the Linears before a residual LayerNorm) + the dynamic enc.quantize of
/// the LayerNorm's output when q is not null: the residual is added in the
/// qlinear's epilogue, then each block's rows of y are normalised and
/// quantised in place. Bit-identical to qlinear, addLayerNorm and
/// quantizeRows one after the other.
template <int K, int N, int Epi>
void qlinearAddLayerNorm(const uint8_t *xq, const float *xScale, const void *packed, const float *wScale,
                         const float *bias, const float *residual, const float *gamma, const float *beta, float *y,
                         uint8_t *q, float *qScale, int64_t rows, float eps, int32_t task, int32_t numTasks) {
  const int64_t ldq = q8RowStride(N);
  qlinearRowBlocks<K, N, Epi>(
      xq, xScale, packed, wScale, bias, residual, rows, task, numTasks,
      [&](int64_t, int64_t i0) { return y + i0 * N; },
      [&](int64_t i0, int64_t i1, float *block) {
        for (int64_t i = i0; i < i1; ++i) {
          float *row = block + (i - i0) * N;
          layerNormRow<N>(row, gamma, beta, row, eps);
          if (q)
            quantizeRowTo<N>(row, q + i * ldq, qScale + i, 0.0f);
        }
      });
}

/// enc.embedding with an int8 word table: y[b,s,:] = wordQ[id] * wordScale[id]
/// + pos[position] + type[typeIds[b,s]]; positions, clamping and a null typeIds
/// as in embedding().
template <int H>
void embeddingQ8(const int32_t *ids, const int32_t *typeIds,
                 const int8_t *wordQ, const float *wordScale, int64_t V,
                 const float *pos, int64_t P, const float *type, int64_t T,
                 float *y, int64_t B, int64_t S, int64_t offset, int64_t padId,
                 int32_t task, int32_t numTasks) {
  int64_t t0, t1;
  taskShare(B * S, task, numTasks, t0, t1);
  for (int64_t t = t0; t < t1; ++t)
    embeddingRow<H>(ids[t], wordQ, wordScale, V, pos, P, typeRow<H>(type, typeIds, T, t),
                    positionRow(ids + t / S * S, t % S, offset, padId), y + t * H);
}

/// embeddingQ8, packed: rows offsets[b] + s of y [tokens, H] (see
/// embeddingPacked).
template <int H>
void embeddingQ8Packed(const int32_t *ids, const int32_t *typeIds,
                       const int8_t *wordQ, const float *wordScale, int64_t V,
                       const float *pos, int64_t P, const float *type,
                       int64_t T, float *y, const int32_t *offsets, int64_t B,
                       int64_t S, int64_t offset, int64_t padId, int32_t task,
                       int32_t numTasks) {
  int64_t t0, t1;
  taskShare(offsets[B], task, numTasks, t0, t1);
  forEachPackedRow(offsets, B, t0, t1, [&](int64_t t, int64_t b, int64_t s) {
    embeddingRow<H>(ids[b * S + s], wordQ, wordScale, V, pos, P,
                    typeRow<H>(type, typeIds, T, b * S + s), positionRow(ids + b * S, s, offset, padId),
                    y + t * H);
  });
}

} // namespace enc_kernels

#endif // ENC_KERNELS_QUANT_H
