//===- enc_gemm.h - fp32 GEMM kernels: linear and batched matmul --*- C++ -*-===//
//
// linear: y[M,N] = x[M,K] · W[N,K]ᵀ + b (PyTorch layout, W rows K-contiguous),
// so every output is a K-contiguous dot product. The micro-kernel computes an
// R x C tile of such dots with R*C eight-lane accumulators (vectorised over
// K), reduces them once at the end, and handles any K, M, N.
//
// Work split: `linear` cuts the output into (row chunk, column chunk) units
// and gives each task a contiguous run of units, column chunk outermost so a
// task reuses its block of W (sized to stay in L2) across row chunks.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_GEMM_H
#define ENC_KERNELS_GEMM_H

#include "enc_common.h"

namespace enc_kernels {

/// out[r][c] = sum_k x[r*ldx + k] * w[c*ldw + k] for k in [0, K).
template <int R, int C>
ENC_INLINE void dotTile(const float *x, int64_t ldx, const float *w,
                        int64_t ldw, int64_t K, float (&out)[R][C]) {
  v8f acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      acc[r][c] = v8f{0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    v8f wv[C];
    for (int c = 0; c < C; ++c)
      wv[c] = load8(w + c * ldw + k);
    for (int r = 0; r < R; ++r) {
      const v8f xv = load8(x + r * ldx + k);
      for (int c = 0; c < C; ++c)
        acc[r][c] += xv * wv[c];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = hsum8(acc[r][c]);
      for (int64_t kk = k; kk < K; ++kk)
        s += x[r * ldx + kk] * w[c * ldw + kk];
      out[r][c] = s;
    }
}

enum LinearEpilogue : int { kEpiNone = 0, kEpiGelu = 1, kEpiGeluTanh = 2 };

template <int Epi> ENC_INLINE float applyEpilogue(float v) {
  if (Epi == kEpiGelu)
    return gelu<kGeluErf>(v);
  if (Epi == kEpiGeluTanh)
    return gelu<kGeluTanh>(v);
  return v;
}

/// Rows [i0, i1) x columns [j0, j1) of y = x·Wᵀ + b (b may be null).
template <int Epi, int TR, int TC>
ENC_INLINE void linearBlock(const float *x, const float *w, const float *b,
                            float *y, int64_t K, int64_t N, int64_t i0,
                            int64_t i1, int64_t j0, int64_t j1) {
  auto store = [&](int64_t i, int64_t j, float v) {
    y[i * N + j] = b ? v + b[j] : v;
  };
  int64_t i = i0;
  for (; i + TR <= i1; i += TR) {
    int64_t j = j0;
    for (; j + TC <= j1; j += TC) {
      float t[TR][TC];
      dotTile<TR, TC>(x + i * K, K, w + j * K, K, K, t);
      for (int r = 0; r < TR; ++r)
        for (int c = 0; c < TC; ++c)
          store(i + r, j + c, t[r][c]);
    }
    for (; j < j1; ++j) {
      float t[TR][1];
      dotTile<TR, 1>(x + i * K, K, w + j * K, K, K, t);
      for (int r = 0; r < TR; ++r)
        store(i + r, j, t[r][0]);
    }
  }
  for (; i < i1; ++i) {
    int64_t j = j0;
    for (; j + TC <= j1; j += TC) {
      float t[1][TC];
      dotTile<1, TC>(x + i * K, K, w + j * K, K, K, t);
      for (int c = 0; c < TC; ++c)
        store(i, j + c, t[0][c]);
    }
    for (; j < j1; ++j) {
      float t[1][1];
      dotTile<1, 1>(x + i * K, K, w + j * K, K, K, t);
      store(i, j, t[0][0]);
    }
  }
  if (Epi != kEpiNone) // a separate pass so that it vectorises
    for (int64_t r = i0; r < i1; ++r)
      for (int64_t j = j0; j < j1; ++j)
        y[r * N + j] = applyEpilogue<Epi>(y[r * N + j]);
}

/// enc.linear: x [M, K], w [N, K], b [N] or null, y [M, N].
template <int K, int N, int Epi>
void linear(const float *x, const float *w, const float *b, float *y,
            int64_t M, int32_t task, int32_t numTasks) {
  constexpr int64_t kRowChunk = 64;
  // A column chunk of W is ~96 KiB, a multiple of the tile width.
  constexpr int64_t kColChunk =
      std::max<int64_t>(4, std::min<int64_t>(256, (24576 / K) & ~int64_t(3)));
  const int64_t rowChunks = (M + kRowChunk - 1) / kRowChunk;
  const int64_t colChunks = (N + kColChunk - 1) / kColChunk;
  int64_t u0, u1;
  taskShare(rowChunks * colChunks, task, numTasks, u0, u1);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t cc = u / rowChunks, rc = u % rowChunks;
    const int64_t i0 = rc * kRowChunk, i1 = std::min(M, i0 + kRowChunk);
    const int64_t j0 = cc * kColChunk, j1 = std::min<int64_t>(N, j0 + kColChunk);
    linearBlock<Epi, 4, 3>(x, w, b, y, K, N, i0, i1, j0, j1);
  }
}

/// enc.matmul {transpose_b}: a [nb, M, K], b [nb, N, K], y [nb, M, N].
/// KS > 0 fixes K at compile time (the head dim); KS == 0 uses `k`.
template <int KS>
void matmulNT(const float *a, const float *b, float *y, int64_t nb, int64_t M,
              int64_t N, int64_t k, int32_t task, int32_t numTasks) {
  const int64_t K = KS > 0 ? KS : k;
  constexpr int64_t TR = 4;
  // Work unit: TR rows of one batch entry against all N columns.
  const int64_t rowTiles = (M + TR - 1) / TR;
  int64_t u0, u1;
  taskShare(nb * rowTiles, task, numTasks, u0, u1);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t bi = u / rowTiles, i0 = (u % rowTiles) * TR;
    const int64_t i1 = std::min(M, i0 + TR);
    const float *ab = a + bi * M * K, *bb = b + bi * N * K;
    float *yb = y + bi * M * N;
    if (i1 - i0 == TR) {
      int64_t j = 0;
      for (; j + 3 <= N; j += 3) {
        float t[TR][3];
        dotTile<TR, 3>(ab + i0 * K, K, bb + j * K, K, K, t);
        for (int r = 0; r < TR; ++r)
          for (int c = 0; c < 3; ++c)
            yb[(i0 + r) * N + j + c] = t[r][c];
      }
      for (; j < N; ++j) {
        float t[TR][1];
        dotTile<TR, 1>(ab + i0 * K, K, bb + j * K, K, K, t);
        for (int r = 0; r < TR; ++r)
          yb[(i0 + r) * N + j] = t[r][0];
      }
    } else {
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < N; ++j) {
          float t[1][1];
          dotTile<1, 1>(ab + i * K, K, bb + j * K, K, K, t);
          yb[i * N + j] = t[0][0];
        }
    }
  }
}

/// enc.matmul: a [nb, M, K], b [nb, K, N], y [nb, M, N]. NS > 0 fixes N at
/// compile time (the head dim); NS == 0 uses `n`.
template <int NS>
void matmulNN(const float *a, const float *b, float *y, int64_t nb, int64_t M,
              int64_t n, int64_t K, int32_t task, int32_t numTasks) {
  const int64_t N = NS > 0 ? NS : n;
  int64_t r0, r1;
  taskShare(nb * M, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t bi = row / M;
    const float *ar = a + row * K, *bb = b + bi * K * N;
    float *yr = y + row * N;
    if (NS > 0) {
      float acc[NS > 0 ? NS : 1];
      for (int64_t j = 0; j < NS; ++j)
        acc[j] = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        const float av = ar[kk];
        const float *br = bb + kk * NS;
        for (int64_t j = 0; j < NS; ++j)
          acc[j] += av * br[j];
      }
      for (int64_t j = 0; j < NS; ++j)
        yr[j] = acc[j];
    } else {
      for (int64_t j = 0; j < N; ++j)
        yr[j] = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        const float av = ar[kk];
        const float *br = bb + kk * N;
        for (int64_t j = 0; j < N; ++j)
          yr[j] += av * br[j];
      }
    }
  }
}

} // namespace enc_kernels

#endif // ENC_KERNELS_GEMM_H
