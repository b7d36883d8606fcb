//===- enc_qgemm.h - int8 GEMM: quantised linear kernels --------*- C++ -*-===//
//
// y[M,N] = dequant(x_q[M,K] · W_q[N,K]ᵀ) + b, then an epilogue, with int32
// accumulation. Plain C++17 + intrinsics; no allocation, no library.
//
// Quantisation (all rounding is round-half-to-even of one float product):
//  - Weights, symmetric per output channel, done once by the compiler:
//      s_n = max_k |W[n,k]| / 127,  q[n,k] = clamp(rne(W[n,k] * (127 / max)),
//      -127, 127)  (quantizeWeightsQ8), then packed (packWeightsQ8).
//  - Activations, dynamic per row (token), u8 with zero point 128:
//      s_m = max_k |x[m,k]| / 127,  x_q[m,k] = clamp(rne(x[m,k] * (127 / max))
//      + 128, 0, 255)  (quantizeRowQ8; all-zero rows get s_m = 0, x_q = 128).
//  - Output: acc[m,n] = sum_k x_q[m,k] * q[n,k] (u8 x s8, exact in int32 for
//      K <= kQ8MaxK), then
//      y[m,n] = act(float(acc - 128 * colsum_n) * (s_m * s_n) + b_n) + r[m,n]
//      with colsum_n = sum_k q[n,k] precomputed at pack time, act = none /
//      GELU (erf) / GELU (tanh), r an optional residual.
//
// Packed weights (packWeightsQ8; ISA-independent, so the compiler can pack
// without knowing the target's flags), for Np = N rounded up to 16 and
// Kp = K rounded up to 4:
//    int32 colsum[Np]                        (padding channels: 0)
//    int8  block[Np/16][Kp/4][16][4]         block[b][g][j][t] = q[16b+j][4g+t]
// i.e. a block is 16 output channels x all of K, stored as Kp/4 groups of 64
// bytes (16 channels x 4 consecutive k); padding k and channels are 0. One
// group is exactly one zmm operand of vpdpbusd (or two ymm). The block data
// starts at byte 4*Np (a multiple of 64).
//
// Micro-kernels, chosen at compile time from the predefined macros (the
// variant lives in its own inline namespace, so TUs built with different
// flags do not clash); q8PathName() says which one, q8CpuSupported() checks
// it against the running CPU (call it at load):
//  - "avx512vnni" (__AVX512VNNI__ + __AVX512BW__): vpdpbusd on zmm, tile of
//    6 rows x 32 channels (12 zmm accumulators; measured ~25% faster than
//    4 x 64 on Zen 4).
//  - "amx-int8" (__AMX_INT8__ on top of the avx512vnni flags): with K a
//    multiple of 64, tdpbusd tiles (enc_amx.h): 32 rows x 32 channels per
//    step, the packed groups are the B tile's layout as they are; other K
//    take the avx512vnni tile.
//  - "avxvnni" (__AVXVNNI__): vpdpbusd on ymm, 2 rows x 32 channels.
//  - "avx2" (__AVX2__): EXACT path. vpmaddubsw would saturate (255*127*2 >
//    32767), so weights are widened with vpmovsxbw, activations with
//    vpmovzxbw, and multiplied with vpmaddwd (int16 pairs -> int32, exact).
//    Full 8-bit weights, same accuracy as the VNNI paths; 2 rows x 16
//    channels, activations widened 16 bytes at a time. A 7-bit-weight
//    vpmaddubsw path was not taken: it costs accuracy and its inner loop's
//    peak is only ~1.25x the exact one's (231 vs 187 GOP/s on Zen 4, see
//    bench/qgemm).
//  - "scalar": portable C++ loops over the same layout.
// All variants produce bit-identical int32 accumulators.
//
// Work split: the output is cut into (~64-row chunk, column chunk) units,
// row chunk outermost; task t of n owns a contiguous run of units (any M >= 1,
// any N, K). qlinearQ8 quantises a row chunk into the task's scratch once per
// chunk it visits.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_QGEMM_H
#define ENC_KERNELS_QGEMM_H

#include "enc_common.h"

#include <cstddef>

#if defined(__AVX2__) || defined(__AVXVNNI__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__AVXVNNI__) || defined(__AMX_INT8__)
#include <cpuid.h>
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
#define ENC_Q8_VARIANT q8_amxint8
#define ENC_Q8_PATH_AMX 1
#include "enc_amx.h"
#else
#define ENC_Q8_VARIANT q8_avx512vnni
#endif
#define ENC_Q8_PATH_VNNI512 1
#elif defined(__AVXVNNI__)
#define ENC_Q8_VARIANT q8_avxvnni
#define ENC_Q8_PATH_AVXVNNI 1
#elif defined(__AVX2__)
#define ENC_Q8_VARIANT q8_avx2
#define ENC_Q8_PATH_AVX2 1
#else
#define ENC_Q8_VARIANT q8_scalar
#define ENC_Q8_PATH_SCALAR 1
#endif

namespace enc_kernels {
inline namespace ENC_Q8_VARIANT {

/// Output channels per packed block; k values per group.
constexpr int kQ8BlockN = 16;
constexpr int kQ8GroupK = 4;
/// Largest |weight| after quantisation (all paths are exact with 8 bits).
constexpr int kQ8WeightMax = 127;
constexpr int kQ8ActZeroPoint = 128;
/// Largest K whose u8 x s8 sums cannot overflow int32:
/// (2^31 - 1) / (255 * 127), rounded down.
constexpr int64_t kQ8MaxK = 66311;
/// Epilogues; same values as enc_sgemm.h's LinearEpilogue.
enum Q8Epilogue : int { kQ8EpiNone = 0, kQ8EpiGelu = 1, kQ8EpiGeluTanh = 2 };

ENC_INLINE int64_t q8PaddedN(int64_t N) { return (N + 15) & ~int64_t(15); }
ENC_INLINE int64_t q8PaddedK(int64_t K) { return (K + 3) & ~int64_t(3); }
/// Row stride (bytes) of quantised activations the kernels read: rows must
/// be readable up to K rounded up to 4 (the padding bytes' values are
/// irrelevant, their weights are 0).
ENC_INLINE int64_t q8RowStride(int64_t K) { return q8PaddedK(K); }

//===----------------------------------------------------------------------===//
// Weights (compile time)
//===----------------------------------------------------------------------===//

/// Symmetric per-output-channel quantisation of W [N, K] (row-major, HF
/// layout) into q [N, K] and scales [N].
inline void quantizeWeightsQ8(const float *w, int N, int K, int8_t *q,
                              float *scales) {
  for (int64_t n = 0; n < N; ++n) {
    const float *wr = w + n * K;
    float amax = 0.0f;
    for (int64_t k = 0; k < K; ++k)
      amax = std::max(amax, std::fabs(wr[k]));
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    scales[n] = amax / 127.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float t = wr[k] * inv;
      const int v = static_cast<int>(std::nearbyint(t));
      q[n * K + k] = static_cast<int8_t>(std::min(127, std::max(-127, v)));
    }
  }
}

inline size_t packedWeightsQ8Bytes(int N, int K) {
  return size_t(q8PaddedN(N)) * (4 + size_t(q8PaddedK(K)));
}

/// Packs q [N, K] into `out` (packedWeightsQ8Bytes(N, K) bytes; 64-byte
/// alignment recommended) in the layout described at the top of this file.
inline void packWeightsQ8(const int8_t *w, int N, int K, void *out) {
  const int64_t Np = q8PaddedN(N), Kp = q8PaddedK(K);
  auto *bytes = static_cast<unsigned char *>(out);
  int8_t *blocks = reinterpret_cast<int8_t *>(bytes + 4 * Np);
  for (int64_t n = 0; n < Np; ++n) {
    int32_t sum = 0;
    for (int64_t k = 0; k < Kp; ++k) {
      const int8_t v = (n < N && k < K) ? w[n * K + k] : int8_t(0);
      sum += v;
      blocks[(n / 16) * 16 * Kp + (k / 4) * 64 + (n % 16) * 4 + (k % 4)] = v;
    }
    std::memcpy(bytes + 4 * n, &sum, 4);
  }
}

/// The per-channel sums of the packed weights (int32 [Np]).
ENC_INLINE const int32_t *packedColSumsQ8(const void *packed) {
  return static_cast<const int32_t *>(packed);
}

ENC_INLINE const int8_t *packedBlocksQ8(const void *packed, int64_t N) {
  return static_cast<const int8_t *>(packed) + 4 * q8PaddedN(N);
}

//===----------------------------------------------------------------------===//
// Activations (run time)
//===----------------------------------------------------------------------===//

/// Quantises one row x[0..K) to q[0..K) (u8, zero point 128) and its scale.
/// Writes exactly K bytes; meant to be fused into the producer of x.
inline void quantizeRowQ8(const float *x, int K, uint8_t *q, float *scale) {
  const int64_t n = K > 0 ? K : 0, n8 = n & ~int64_t(7);
  v8f vmax = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  // 16 values per instruction: the max and the conversion take a quarter of
  // the AVX2 loop's instructions (vpmovusdb packs and stores in one).
  const int64_t n16 = n & ~int64_t(15);
  __m512 vmax16 = _mm512_setzero_ps();
  for (; k < n16; k += 16) // |x| first: a NaN keeps the running max, as below
    vmax16 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + k)), vmax16);
  const __m256 hi8 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vmax16), 1));
  vmax = (v8f)_mm256_max_ps(hi8, _mm512_castps512_ps256(vmax16));
#endif
  for (; k < n8; k += 8) {
    const v8f v = load8(x + k);
    const v8f a = v < 0.0f ? -v : v;
    vmax = a > vmax ? a : vmax;
  }
  float amax = 0.0f;
  for (int l = 0; l < 8; ++l)
    amax = std::max(amax, vmax[l]);
  for (; k < n; ++k)
    amax = std::max(amax, std::fabs(x[k]));
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  *scale = amax / 127.0f;
  k = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  {
    const __m512 vinv16 = _mm512_set1_ps(inv);
    const __m512i zp16 = _mm512_set1_epi32(128), lo16 = _mm512_setzero_si512();
    for (; k < n16; k += 16) {
      // Negative sums clamp to 0 here; vpmovusdb saturates above 255.
      __m512i i = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + k), vinv16)), zp16);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(q + k), _mm512_cvtusepi32_epi8(_mm512_max_epi32(i, lo16)));
    }
  }
#endif
#if defined(__AVX2__)
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i zp = _mm256_set1_epi32(128), lo = _mm256_setzero_si256(),
                hi = _mm256_set1_epi32(255);
  for (; k < n8; k += 8) {
    // cvtps rounds half to even (default MXCSR), like nearbyint below.
    const __m256 t = _mm256_mul_ps(_mm256_loadu_ps(x + k), vinv);
    __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(t), zp);
    i = _mm256_min_epi32(_mm256_max_epi32(i, lo), hi);
    const __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(i, i), lo);
    const int32_t q0 = _mm_cvtsi128_si32(_mm256_castsi256_si128(p));
    const int32_t q1 = _mm_cvtsi128_si32(_mm256_extracti128_si256(p, 1));
    std::memcpy(q + k, &q0, 4);
    std::memcpy(q + k + 4, &q1, 4);
  }
#endif
  for (; k < n; ++k) {
    const float t = x[k] * inv;
    const int v = static_cast<int>(std::nearbyint(t)) + 128;
    q[k] = static_cast<uint8_t>(std::min(255, std::max(0, v)));
  }
}

//===----------------------------------------------------------------------===//
// Micro-kernels: out[r][c*16 + j] = sum_k x[r*ldx + k] * block(c)[k][j] over
// `groups` groups of 4 k; blocks `bb` bytes apart; out has row stride ldo.
//===----------------------------------------------------------------------===//

ENC_INLINE int32_t q8Load4(const uint8_t *p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

#if defined(ENC_Q8_PATH_VNNI512)
constexpr int kQ8TileR = 6, kQ8TileC = 2;
#if defined(ENC_Q8_PATH_AMX)
inline const char *q8PathName() { return "amx-int8"; }
/// The ISA only: the caller must also hold the tile-data permission (the
/// runtime's CPU feature check requests it; tests request it themselves).
inline bool q8CpuSupported() {
  unsigned a, b, c, d;
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
         __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((d >> 24) & 1) && ((d >> 25) & 1);
}
#else
inline const char *q8PathName() { return "avx512vnni"; }
inline bool q8CpuSupported() {
  return __builtin_cpu_supports("avx512vnni") &&
         __builtin_cpu_supports("avx512bw");
}
#endif

/// With Prefetch, also asks for the same group of the C blocks at `next`
/// (into L2), one line per block and group: the next column blocks' weight
/// then streams from memory while this tile computes (q8Blocks).
template <int R, int C, bool Prefetch = false>
ENC_INLINE void q8Tile(const uint8_t *x, int64_t ldx, const int8_t *w,
                       int64_t bb, int64_t groups, int32_t *out, int64_t ldo,
                       const int8_t *next = nullptr) {
  __m512i acc[R][C];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
      acc[r][c] = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; ++g) {
    __m512i wv[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
      wv[c] = _mm512_loadu_si512(w + c * bb + g * 64);
    if constexpr (Prefetch) {
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c)
        __builtin_prefetch(next + c * bb + g * 64, 0, 2);
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_set1_epi32(q8Load4(x + r * ldx + 4 * g));
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c)
        acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], xv, wv[c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
      _mm512_storeu_si512(out + r * ldo + c * 16, acc[r][c]);
}

#elif defined(ENC_Q8_PATH_AVXVNNI)
constexpr int kQ8TileR = 2, kQ8TileC = 2;
inline const char *q8PathName() { return "avxvnni"; }
inline bool q8CpuSupported() {
  // CPUID.(7,1):EAX bit 4 (older compilers lack the "avxvnni" name).
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __builtin_cpu_supports("avx2") &&
         __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
}

template <int R, int C>
ENC_INLINE void q8Tile(const uint8_t *x, int64_t ldx, const int8_t *w,
                       int64_t bb, int64_t groups, int32_t *out, int64_t ldo) {
  __m256i acc[R][2 * C];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < 2 * C; ++c)
      acc[r][c] = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    __m256i wv[2 * C];
#pragma GCC unroll 16
    for (int c = 0; c < 2 * C; ++c)
      wv[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
          w + (c / 2) * bb + g * 64 + (c % 2) * 32));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m256i xv = _mm256_set1_epi32(q8Load4(x + r * ldx + 4 * g));
#pragma GCC unroll 16
      for (int c = 0; c < 2 * C; ++c)
        acc[r][c] = _mm256_dpbusd_avx_epi32(acc[r][c], xv, wv[c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < 2 * C; ++c)
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + r * ldo + c * 8),
                          acc[r][c]);
}

#elif defined(ENC_Q8_PATH_AVX2)
constexpr int kQ8TileR = 2, kQ8TileC = 1;
inline const char *q8PathName() { return "avx2"; }
inline bool q8CpuSupported() { return __builtin_cpu_supports("avx2"); }

template <int R, int C>
ENC_INLINE void q8Tile(const uint8_t *x, int64_t ldx, const int8_t *w,
                       int64_t bb, int64_t groups, int32_t *out, int64_t ldo) {
  // acc[r][c][h]: int32 lanes (ch 4h+l/2, k pair l%2) of 4 channels.
  __m256i acc[R][C][4];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h)
        acc[r][c][h] = _mm256_setzero_si256();
  // One k group: weights widened once, shared by the R rows.
  auto step = [&](int64_t g, const __m256i(&xv)[R]) {
    __m256i wv[C][4];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h)
        wv[c][h] = _mm256_cvtepi8_epi16(_mm_loadu_si128(
            reinterpret_cast<const __m128i *>(w + c * bb + g * 64 + h * 16)));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
        for (int h = 0; h < 4; ++h)
          acc[r][c][h] = _mm256_add_epi32(acc[r][c][h],
                                          _mm256_madd_epi16(xv[r], wv[c][h]));
  };
  int64_t g = 0;
  const int64_t groups4 = groups & ~int64_t(3);
  // Four groups at a time: 16 activation bytes widened once per row, each
  // group's x0..x3 (int16) then broadcast to all four 64-bit lanes.
  for (; g < groups4; g += 4) {
    __m256i xw[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xw[r] = _mm256_cvtepu8_epi16(_mm_loadu_si128(
          reinterpret_cast<const __m128i *>(x + r * ldx + 4 * g)));
    __m256i xv[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xv[r] = _mm256_permute4x64_epi64(xw[r], 0x00);
    step(g, xv);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xv[r] = _mm256_permute4x64_epi64(xw[r], 0x55);
    step(g + 1, xv);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xv[r] = _mm256_permute4x64_epi64(xw[r], 0xAA);
    step(g + 2, xv);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xv[r] = _mm256_permute4x64_epi64(xw[r], 0xFF);
    step(g + 3, xv);
  }
  for (; g < groups; ++g) {
    __m256i xv[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      xv[r] = _mm256_broadcastq_epi64(
          _mm_cvtepu8_epi16(_mm_cvtsi32_si128(q8Load4(x + r * ldx + 4 * g))));
    step(g, xv);
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        // hadd: [c0 c1 c4 c5 | c2 c3 c6 c7] -> permute to c0..c7.
        const __m256i s =
            _mm256_hadd_epi32(acc[r][c][2 * h], acc[r][c][2 * h + 1]);
        _mm256_storeu_si256(
            reinterpret_cast<__m256i *>(out + r * ldo + c * 16 + h * 8),
            _mm256_permute4x64_epi64(s, 0xD8));
      }
}

#else
constexpr int kQ8TileR = 2, kQ8TileC = 1;
inline const char *q8PathName() { return "scalar"; }
inline bool q8CpuSupported() { return true; }

template <int R, int C>
ENC_INLINE void q8Tile(const uint8_t *x, int64_t ldx, const int8_t *w,
                       int64_t bb, int64_t groups, int32_t *out, int64_t ldo) {
  int32_t acc[R][C * 16] = {};
  for (int64_t g = 0; g < groups; ++g)
    for (int r = 0; r < R; ++r) {
      const uint8_t *xg = x + r * ldx + 4 * g;
      const int32_t x0 = xg[0], x1 = xg[1], x2 = xg[2], x3 = xg[3];
      for (int c = 0; c < C; ++c) {
        const int8_t *wg = w + c * bb + g * 64;
        for (int j = 0; j < 16; ++j)
          acc[r][c * 16 + j] += x0 * wg[4 * j] + x1 * wg[4 * j + 1] +
                                x2 * wg[4 * j + 2] + x3 * wg[4 * j + 3];
      }
    }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C * 16; ++j)
      out[r * ldo + j] = acc[r][j];
}
#endif

/// Calls q8Tile<r, c> for runtime 1 <= r <= R, 1 <= c <= C. Opaque
/// (ENC_OPAQUE): inlined into the fused qlinear + quantize / + LayerNorm
/// drivers of enc_quant.h, or cloned for a model's constant row stride, GCC
/// 12 copied every accumulator out of and back into its register around each
/// vpdpbusd (24 zmm moves per 12 products in the K loop); compiled alone the
/// loop is loads, broadcasts and products only.
template <int R, int C>
ENC_OPAQUE void q8TileDispatch(int r, int c, const uint8_t *x, int64_t ldx,
                               const int8_t *w, int64_t bb, int64_t groups,
                               int32_t *out, int64_t ldo,
                               const int8_t *next = nullptr) {
  if constexpr (R > 1)
    if (r < R)
      return q8TileDispatch<R - 1, C>(r, c, x, ldx, w, bb, groups, out, ldo, next);
  if constexpr (C > 1)
    if (c < C)
      return q8TileDispatch<R, C - 1>(r, c, x, ldx, w, bb, groups, out, ldo, next);
#if defined(ENC_Q8_PATH_VNNI512)
  if (next)
    return q8Tile<R, C, true>(x, ldx, w, bb, groups, out, ldo, next);
#endif
  q8Tile<R, C>(x, ldx, w, bb, groups, out, ldo);
}

//===----------------------------------------------------------------------===//
// Drivers
//===----------------------------------------------------------------------===//

/// Rows per work unit: ~64, a multiple of the tile height.
constexpr int64_t kQ8RowChunk = 64 / kQ8TileR * kQ8TileR;

/// Rows a fused qlinear + quantize computes across all columns before it
/// quantises them (enc_quant.h qlinearQuantize): ~32, a multiple of the tile
/// height (the AMX tile's 32 rows where it runs).
#if defined(ENC_Q8_PATH_AMX)
constexpr int64_t kQ8StageRows = 32;
#else
constexpr int64_t kQ8StageRows = 32 / kQ8TileR * kQ8TileR;
#endif

/// The fewest rows a task of a row-split driver (enc_quant.h's qlinear +
/// quantize / + LayerNorm) is given, as each such task reads the whole
/// weight: an AMX tile's 16 rows; else 4 (a 4-row avx512vnni tile does 8
/// products per 2 weight loads, a 1-row one 2; the ymm paths' 2-row tiles
/// reuse each weight block, held in L1, twice). MiniLM int8 on Zen 4, 2
/// threads: 1 x 8 0.34-0.38 ms against 0.58-0.85 with a task per row, 1 x 16
/// 0.64-0.70 against 0.76-0.99 (a minimum of 6: 0.58-0.61 and 0.67-1.2).
#if defined(ENC_Q8_PATH_AMX)
constexpr int64_t kQ8MinTaskRows = 16;
#else
constexpr int64_t kQ8MinTaskRows = 4;
#endif

/// The unit grid: row chunks (outermost) x column chunks of 16-ch blocks.
struct Q8Split {
  int64_t rowChunks, colChunkBlocks, colChunks, blocks;
};

ENC_INLINE Q8Split q8Split(int64_t M, int64_t N, int32_t numTasks) {
  Q8Split s;
  s.blocks = q8PaddedN(N) / 16;
  s.rowChunks = (M + kQ8RowChunk - 1) / kQ8RowChunk;
  s.colChunkBlocks = 8 > kQ8TileC ? 8 : kQ8TileC;
  // Few rows (M = 1): cut the columns finer so every task gets work.
  while (s.colChunkBlocks / 2 >= kQ8TileC &&
         s.rowChunks * ((s.blocks + s.colChunkBlocks - 1) / s.colChunkBlocks) <
             4 * int64_t(numTasks))
    s.colChunkBlocks /= 2;
  s.colChunks = (s.blocks + s.colChunkBlocks - 1) / s.colChunkBlocks;
  return s;
}

/// Whether a qlinear on quantised rows walks its units column chunk by
/// column chunk (all row chunks of one, then the next) rather than row chunk
/// by row chunk: on AMX, for a weight over 1 MiB (about half this core's L2:
/// BERT-base's QKV and FFN Linears). Rows first, such a weight streams from
/// L3 or memory once per 64-row chunk; columns first, a 128-column chunk of
/// it stays in L2 for all rows, and the rows stream once per column chunk:
/// half the traffic when they do not fit in L2 either (BERT-base's FFN-down
/// at 8 x 128: 1.07x, qgemm_bench M=1024), a single pass of the weight when
/// they do (1.28-1.30x at M=128), and the tasks split the weight instead of
/// each reading all of it. MiniLM's weights stay rows first.
ENC_INLINE bool q8ColumnsFirst(int64_t N, int64_t K) {
#if defined(ENC_Q8_PATH_AMX)
  return q8PaddedN(N) * q8PaddedK(K) > (int64_t(1) << 20);
#else
  (void)N, (void)K;
  return false;
#endif
}

/// Calls f(rowChunk, i0, i1, b0, b1, bNext) for each unit of task `task` of
/// `numTasks`: rows [i0, i1) of row chunk `rowChunk`, 16-channel blocks
/// [b0, b1); bNext: the first block of the task's next unit (-1: none), whose
/// weight q8Blocks prefetches while it computes the last block of this one.
/// Units of one row chunk are consecutive, or with columnsFirst those of one
/// column chunk.
template <typename F>
ENC_INLINE void forEachQ8Unit(int64_t M, int64_t N, int32_t task,
                              int32_t numTasks, F &&f, bool columnsFirst = false) {
  const Q8Split s = q8Split(M, N, numTasks);
  int64_t u0, u1;
  taskShare(s.rowChunks * s.colChunks, task, numTasks, u0, u1);
  auto colChunk = [&](int64_t u) { return columnsFirst ? u / s.rowChunks : u % s.colChunks; };
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t rc = columnsFirst ? u % s.rowChunks : u / s.colChunks;
    const int64_t i0 = rc * kQ8RowChunk, i1 = std::min(M, i0 + kQ8RowChunk);
    const int64_t b0 = colChunk(u) * s.colChunkBlocks,
                  b1 = std::min(s.blocks, b0 + s.colChunkBlocks);
    f(rc, i0, i1, b0, b1, u + 1 < u1 ? colChunk(u + 1) * s.colChunkBlocks : int64_t(-1));
  }
}

/// Rows [i0, i1) x blocks [b0, b1): computes int32 tiles and hands each to
/// store(i, rows, n0, n1, tile, ldTile) for output columns [n0, n1). xq
/// points at row i0. bNext >= 0: the first block of the caller's next unit
/// (forEachQ8Unit), prefetched with the last column block.
template <class Store>
ENC_INLINE void q8Blocks(const uint8_t *xq, int64_t ldx, int64_t i0, int64_t i1,
                         const int8_t *blocks, int64_t N, int64_t K, int64_t b0,
                         int64_t b1, Store &&store, int64_t bNext = -1) {
  const int64_t bb = 16 * q8PaddedK(K), groups = q8PaddedK(K) / 4;
#if defined(ENC_Q8_PATH_AMX)
  if (K % 64 == 0) {
    // A step is 64 k: 64 bytes of an x row, 16 groups (1024 bytes) of a block.
    amxTiles</*Int8=*/true>(xq, ldx, i1 - i0, reinterpret_cast<const uint8_t *>(blocks + b0 * bb), bb, b1 - b0,
                            groups / 16, /*colsOuter=*/false, [&](const AmxTileAt &t, const int32_t *c) {
                              const int64_t n0 = (b0 + t.b) * 16;
                              store(i0 + t.i, t.m, n0, std::min(N, n0 + t.nb * 16), c, int64_t(32));
                            });
    return;
  }
#endif
  constexpr int64_t ldt = kQ8TileC * 16;
  alignas(64) int32_t tile[kQ8TileR * ldt];
  for (int64_t b = b0; b < b1; b += kQ8TileC) {
    const int c = int(std::min<int64_t>(kQ8TileC, b1 - b));
    const int64_t n0 = b * 16, n1 = std::min(N, (b + c) * 16);
    // The first row tile of a column block also prefetches the next one
    // (the last, the next unit's first): after it the block is in cache, and
    // with few rows (1 x 16: three tiles) the memory stream would otherwise
    // stand still until the next block's first loads miss.
    const int8_t *next = b + kQ8TileC < b1 ? blocks + (b + kQ8TileC) * bb
                         : bNext >= 0      ? blocks + bNext * bb
                                           : nullptr;
    for (int64_t i = i0; i < i1; i += kQ8TileR) {
      const int r = int(std::min<int64_t>(kQ8TileR, i1 - i));
      q8TileDispatch<kQ8TileR, kQ8TileC>(r, c, xq + (i - i0) * ldx, ldx,
                                         blocks + b * bb, bb, groups, tile,
                                         ldt, i == i0 ? next : nullptr);
      store(i, r, n0, n1, static_cast<const int32_t *>(tile), ldt);
    }
  }
}

/// Raw int32 products, for tests and custom epilogues: acc[m*N + n] =
/// sum_k xq[m*ldx + k] * q[n,k], minus 128 * colsum_n if subtractZeroPoint
/// (= the exact signed dot product of (x_q - 128) and q).
inline void qgemmS32Q8(const uint8_t *xq, int64_t ldx, int64_t M, int K, int N,
                       const void *packed, int32_t *acc, bool subtractZeroPoint,
                       int32_t task, int32_t numTasks) {
  const int32_t *colSum = packedColSumsQ8(packed);
  const int8_t *blocks = packedBlocksQ8(packed, N);
  forEachQ8Unit(M, N, task, numTasks, [&](int64_t, int64_t i0, int64_t i1,
                                          int64_t b0, int64_t b1, int64_t bNext) {
    q8Blocks(
        xq + i0 * ldx, ldx, i0, i1, blocks, N, K, b0, b1,
        [&](int64_t i, int r, int64_t n0, int64_t n1, const int32_t *t, int64_t ldt) {
          for (int rr = 0; rr < r; ++rr)
            for (int64_t n = n0; n < n1; ++n)
              acc[(i + rr) * N + n] = t[rr * ldt + (n - n0)] - (subtractZeroPoint ? 128 * colSum[n] : 0);
        },
        bNext);
  });
}

/// Dequantise + bias + activation + residual of one int32 tile, for a known
/// presence of bias and residual: with null pointers tested inside the loop,
/// GCC if-converts them into masked loads from address 0 + offset, which
/// take a fault-suppression assist on every vector (measured: the GELU
/// qlinear of BERT-base ran 2x slower than its FLOPs allow).
template <int Epi, bool HasBias, bool HasResidual, int Width>
ENC_INLINE void q8EpilogueRows(const int32_t *t, int64_t ldt, int64_t i, int r,
                               int64_t n0, int64_t n1, int64_t N,
                               const float *xScale, const int32_t *colSum,
                               const float *wScale, const float *bias,
                               const float *residual, float *y) {
  // Width > 0: a full tile, n1 - n0 == Width known at compile time, so the
  // column loop vectorises without remainder code.
  const int64_t width = Width > 0 ? Width : n1 - n0;
  const int32_t *cs = colSum + n0;
  const float *ws = wScale + n0;
  const float *bs = HasBias ? bias + n0 : nullptr;
  for (int rr = 0; rr < r; ++rr) {
    const float sm = xScale[rr];
    const int32_t *a = t + rr * ldt;
    float *yr = y + (i + rr) * N + n0;
    const float *res = HasResidual ? residual + (i + rr) * N + n0 : nullptr;
    for (int64_t j = 0; j < width; ++j) {
      float v = float(a[j] - 128 * cs[j]) * (sm * ws[j]);
      if constexpr (HasBias)
        v += bs[j];
      if constexpr (Epi == kQ8EpiGelu)
        v = gelu<kGeluErf>(v);
      else if constexpr (Epi == kQ8EpiGeluTanh)
        v = gelu<kGeluTanh>(v);
      if constexpr (HasResidual)
        v += res[j];
      yr[j] = v;
    }
  }
}

/// q8EpilogueRows with the width of a full tile as a constant where it is
/// one: GCC otherwise emits prologue/remainder code for every 32-value row,
/// which cost 6-10 % of the whole qlinear at M = 128 (qgemm_bench).
template <int Epi, bool HasBias, bool HasResidual>
ENC_INLINE void q8EpilogueWidth(const int32_t *t, int64_t ldt, int64_t i,
                                int r, int64_t n0, int64_t n1, int64_t N,
                                const float *xScale, const int32_t *colSum,
                                const float *wScale, const float *bias,
                                const float *residual, float *y) {
  if (n1 - n0 == kQ8TileC * 16)
    q8EpilogueRows<Epi, HasBias, HasResidual, kQ8TileC * 16>(
        t, ldt, i, r, n0, n1, N, xScale, colSum, wScale, bias, residual, y);
  else
    q8EpilogueRows<Epi, HasBias, HasResidual, 0>(
        t, ldt, i, r, n0, n1, N, xScale, colSum, wScale, bias, residual, y);
}

/// Dequantise + bias + activation + residual of one int32 tile.
template <int Epi>
ENC_INLINE void q8Epilogue(const int32_t *t, int64_t ldt, int64_t i, int r,
                           int64_t n0, int64_t n1, int64_t N,
                           const float *xScale, const int32_t *colSum,
                           const float *wScale, const float *bias,
                           const float *residual, float *y) {
  if (bias && residual)
    q8EpilogueWidth<Epi, true, true>(t, ldt, i, r, n0, n1, N, xScale, colSum,
                                    wScale, bias, residual, y);
  else if (bias)
    q8EpilogueWidth<Epi, true, false>(t, ldt, i, r, n0, n1, N, xScale, colSum,
                                     wScale, bias, residual, y);
  else if (residual)
    q8EpilogueWidth<Epi, false, true>(t, ldt, i, r, n0, n1, N, xScale, colSum,
                                     wScale, bias, residual, y);
  else
    q8EpilogueWidth<Epi, false, false>(t, ldt, i, r, n0, n1, N, xScale, colSum,
                                      wScale, bias, residual, y);
}

/// qlinear on pre-quantised activations: xq [M, ldx] u8 (ldx >=
/// q8RowStride(K), see there), xScale [M]; packed/wScale from
/// packWeightsQ8/quantizeWeightsQ8; bias [N] and residual [M, N] may be null;
/// y [M, N]. y may alias residual.
template <int Epi>
void qlinearQ8Quantized(const uint8_t *xq, int64_t ldx, const float *xScale,
                        int64_t M, int K, int N, const void *packed,
                        const float *wScale, const float *bias,
                        const float *residual, float *y, int32_t task,
                        int32_t numTasks) {
  const int32_t *colSum = packedColSumsQ8(packed);
  const int8_t *blocks = packedBlocksQ8(packed, N);
  forEachQ8Unit(
      M, N, task, numTasks,
      [&](int64_t, int64_t i0, int64_t i1, int64_t b0, int64_t b1, int64_t bNext) {
        q8Blocks(
            xq + i0 * ldx, ldx, i0, i1, blocks, N, K, b0, b1,
            [&](int64_t i, int r, int64_t n0, int64_t n1, const int32_t *t, int64_t ldt) {
              q8Epilogue<Epi>(t, ldt, i, r, n0, n1, N, xScale + i, colSum, wScale, bias, residual, y);
            },
            bNext);
      },
      q8ColumnsFirst(N, K));
}

/// Scratch bytes one task of qlinearQ8 needs (64-byte alignment
/// recommended): a row chunk of quantised rows and their scales.
ENC_INLINE size_t qlinearQ8ScratchBytes(int K) {
  return size_t(kQ8RowChunk) * (4 + size_t(q8RowStride(K)));
}

/// enc.qlinear with dynamic per-row activation quantisation: x [M, K] float;
/// scratch: qlinearQ8ScratchBytes(K) bytes private to this task. Other
/// arguments as qlinearQ8Quantized.
template <int Epi>
void qlinearQ8(const float *x, int64_t M, int K, int N, const void *packed,
               const float *wScale, const float *bias, const float *residual,
               float *y, void *scratch, int32_t task, int32_t numTasks) {
  const int32_t *colSum = packedColSumsQ8(packed);
  const int8_t *blocks = packedBlocksQ8(packed, N);
  const int64_t ldq = q8RowStride(K);
  float *xScale = static_cast<float *>(scratch);
  uint8_t *xq = static_cast<uint8_t *>(scratch) + 4 * kQ8RowChunk;
  int64_t quantised = -1;
  forEachQ8Unit(M, N, task, numTasks, [&](int64_t rc, int64_t i0, int64_t i1,
                                          int64_t b0, int64_t b1, int64_t bNext) {
    if (rc != quantised) {
      for (int64_t i = i0; i < i1; ++i) {
        uint8_t *row = xq + (i - i0) * ldq;
        quantizeRowQ8(x + i * K, K, row, xScale + (i - i0));
        for (int64_t k = K; k < ldq; ++k)
          row[k] = kQ8ActZeroPoint;
      }
      quantised = rc;
    }
    q8Blocks(
        xq, ldq, i0, i1, blocks, N, K, b0, b1,
        [&](int64_t i, int r, int64_t n0, int64_t n1, const int32_t *t, int64_t ldt) {
          q8Epilogue<Epi>(t, ldt, i, r, n0, n1, N, xScale + (i - i0), colSum, wScale, bias, residual, y);
        },
        bNext);
  });
}

} // namespace ENC_Q8_VARIANT
} // namespace enc_kernels

#endif // ENC_KERNELS_QGEMM_H
