//===- enc_sgemm.h - fp32 linear over compile-time packed weights -*- C++ -*-===//
//
// y[M,N] = epilogue(x[M,K] · W[N,K]ᵀ + b) with W packed once by the compiler.
//
// Packed weights (packWeightsF32; ISA-independent, so the compiler packs
// without knowing the target's flags), for Np = N rounded up to 16:
//    float panel[Np/16][K][16]      panel[p][k][j] = W[16p + j][k]
// i.e. a panel is 16 output columns x all of K, one 64-byte row per k;
// padding columns are 0.
//
// Micro-kernel (GotoBLAS style, outer products): an MR x (16 * NP) tile of
// y lives in registers; per k it loads the tile's W row(s) from the panel(s)
// and broadcasts one x value per row. Variants, chosen at compile time from
// the predefined macros (each in its own inline namespace):
//  - "avx512" (__AVX512F__): zmm, 8 rows x 32 columns (2 panels), 16
//    accumulators.
//  - "avx2" (__AVX__): ymm FMA (when __FMA__), 6 rows x 16 columns, 12
//    accumulators.
//  - "sse": the same code on 8-lane vector extensions, 2 rows x 16 columns.
// Cache blocking (SgemmBlocking, chosen by sgemmBlocking): the K loop is cut
// into as few equal chunks of at most kSgemmKCMax as possible; the tile loop
// walks the rows of a block per chunk and panel pair; the tile is reloaded
// from y between chunks. Bias initialises the accumulators; GELU is applied
// to a tile after its last chunk.
//
// Work split: the output is cut into (row block, column block) units of
// equal size (at most kSgemmMC x kSgemmNC, smaller when that gives fewer
// than 4 units per task), row block outermost by default; task t of n owns a contiguous
// run of units (any M >= 1, N >= 1, K >= 1), so every output is written by
// exactly one task.
//
// bf16 linear (linearBf16): x and W in bf16 (enc_bf16.h's packed layout, the
// same panel offsets), products and sums in fp32, through the same blocking
// and work split. Micro-kernel: with __AVX512BF16__ ("avx512bf16") one
// vdpbf16ps per panel, row and k pair (8 rows x 32 columns); otherwise the
// pairs are widened to fp32 (a shift and a mask) and go through the fp32
// FMA tile's registers: the fallback object of a bf16 artifact on CPUs
// without AVX512-BF16, with the same inputs and fp32 accumulation. With AMX
// (__AMX_BF16__) and K a multiple of 32, a unit goes through tdpbf16ps tiles
// instead (amxBlock): 32 x 32 outputs per tile step, the whole K at once.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_SGEMM_H
#define ENC_KERNELS_SGEMM_H

#include "enc_bf16.h"
#include "enc_common.h"
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include "enc_amx.h"
#endif

#include <cstddef>
#include <type_traits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace enc_kernels {

enum LinearEpilogue : int { kEpiNone = 0, kEpiGelu = 1, kEpiGeluTanh = 2 };

/// Output columns per packed panel.
constexpr int kSgemmPanel = 16;

inline int64_t sgemmPanels(int64_t N) {
  return (N + kSgemmPanel - 1) / kSgemmPanel;
}

/// Floats of the packed form of an [N, K] weight.
inline size_t packedWeightsF32Floats(int64_t N, int64_t K) {
  return static_cast<size_t>(sgemmPanels(N) * K * kSgemmPanel);
}

/// Packs w [N, K] (row-major) into `out` (packedWeightsF32Floats(N, K)).
inline void packWeightsF32(const float *w, int64_t N, int64_t K, float *out) {
  for (int64_t p = 0; p < sgemmPanels(N); ++p)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < kSgemmPanel; ++j) {
        const int64_t n = p * kSgemmPanel + j;
        out[(p * K + k) * kSgemmPanel + j] = n < N ? w[n * K + k] : 0.0f;
      }
}

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#define ENC_SGEMM_VARIANT sgemm_amxbf16
#elif defined(__AVX512BF16__)
#define ENC_SGEMM_VARIANT sgemm_avx512bf16
#elif defined(__AVX512F__)
#define ENC_SGEMM_VARIANT sgemm_avx512
#elif defined(__AVX__)
#define ENC_SGEMM_VARIANT sgemm_avx2
#else
#define ENC_SGEMM_VARIANT sgemm_sse
#endif

inline namespace ENC_SGEMM_VARIANT {

#if defined(__AVX512F__)
typedef __m512 svec;
constexpr int kSvecLanes = 16;
constexpr int kSgemmMR = 8, kSgemmNP = 2;
ENC_INLINE svec sLoad(const float *p) { return _mm512_loadu_ps(p); }
ENC_INLINE void sStore(float *p, svec v) { _mm512_storeu_ps(p, v); }
ENC_INLINE svec sSplat(float f) { return _mm512_set1_ps(f); }
ENC_INLINE svec sFma(svec a, svec b, svec c) { return _mm512_fmadd_ps(a, b, c); }
inline const char *sgemmPathName() { return "avx512"; }
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
inline const char *bgemmPathName() { return "amx-bf16"; }
#elif defined(__AVX512BF16__)
inline const char *bgemmPathName() { return "avx512bf16"; }
#else
inline const char *bgemmPathName() { return "avx512"; }
#endif
#else
typedef v8f svec;
constexpr int kSvecLanes = 8;
#if defined(__AVX__)
constexpr int kSgemmMR = 6, kSgemmNP = 1;
inline const char *sgemmPathName() { return "avx2"; }
#else
constexpr int kSgemmMR = 2, kSgemmNP = 1;
inline const char *sgemmPathName() { return "sse"; }
#endif
inline const char *bgemmPathName() { return sgemmPathName(); }
ENC_INLINE svec sLoad(const float *p) { return load8(p); }
ENC_INLINE void sStore(float *p, svec v) { store8(p, v); }
ENC_INLINE svec sSplat(float f) { return splat8(f); }
ENC_INLINE svec sFma(svec a, svec b, svec c) {
#if defined(__FMA__)
  return (svec)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}
#endif

#define ENC_INLINE_LAMBDA __attribute__((always_inline))

/// Default row block and column block of a work unit.
constexpr int64_t kSgemmMC = 12 * kSgemmMR;
constexpr int64_t kSgemmNC = 8 * kSgemmPanel * kSgemmNP;

/// Cache blocking of one linear: at most kc K values per chunk, units of at
/// most mc rows x nc columns (nc a multiple of 16 * kSgemmNP).
struct SgemmBlocking {
  int64_t kc, mc, nc;
  /// With several tasks: cut columns (down to minNc) before rows until there
  /// are unitsPerTask units per task; colMajor walks a column block's row
  /// blocks consecutively (so its weight panels stay in cache).
  int64_t minNc = 4 * kSgemmPanel * kSgemmNP, unitsPerTask = 4;
  bool colMajor = false;
};

/// The blocking sgemmLinearRun uses: K in as few equal chunks of at most
/// kSgemmKCMax as possible (fewer passes that reload and store the output
/// tiles; a 32-column panel chunk then streams from L2, which Zen 4 keeps up
/// with: +6..12 % on BERT-base's linears at 2 threads, see sgemm_bench).
/// Few rows and a wide weight (M <= 256, N >= 3K: MiniLM's QKV and FFN-up
/// Linears at batch 1): the tasks split the columns first, column blocks
/// walked row block by row block, so each weight panel streams from memory
/// into one core only: +7..10 % on those shapes at 2 threads (sgemm_bench
/// blk 0 vs 6); the same split loses 1-7 % on narrow weights and at
/// M = 1024 (blk 5 vs 6), so it stays off there.
constexpr int64_t kSgemmKCMax = 1536;
inline SgemmBlocking sgemmBlocking(int64_t M, int64_t K, int64_t N) {
  const int64_t chunks = (K + kSgemmKCMax - 1) / kSgemmKCMax;
  const int64_t kc = ((K + chunks - 1) / chunks + 15) / 16 * 16;
  SgemmBlocking bl{kc, kSgemmMC, kSgemmNC};
  if (M <= 256 && N >= 3 * K) {
    bl.minNc = kSgemmPanel * kSgemmNP;
    bl.colMajor = true;
  }
  return bl;
}

/// The blocking bgemmLinearRun uses: sgemmBlocking's, except on AMX (K a
/// multiple of 32) for a weight over 1 MiB (about half this core's L2) whose
/// x rows fit in 1 MiB: one row block of all rows, walked column block by
/// column block, so each weight panel streams from L3 or memory once (it did
/// once per 96 rows) while the rows stay in L2, and the tasks split the
/// weight between them. BERT-base bf16 1 x 128 1.08x, 1 x 512 1.10x end to
/// end at 2 threads (1.06x / 1.13x at 1); at 8 x 128 (rows of 1.5 MB) two
/// row blocks this way were 0.98x, and columns first with sgemmBlocking's
/// 96-row blocks 0.99x, so larger row counts keep sgemmBlocking's.
inline SgemmBlocking bgemmBlocking(int64_t M, int64_t K, int64_t N) {
  SgemmBlocking bl = sgemmBlocking(M, K, N);
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  constexpr int64_t kHalfL2 = int64_t(1) << 20;
  if (K % 32 == 0 && sgemmPanels(N) * kSgemmPanel * K * 2 > kHalfL2 && M * K * 2 <= kHalfL2) {
    bl.mc = (M + 31) / 32 * 32;
    bl.minNc = kSgemmPanel * kSgemmNP;
    bl.colMajor = true;
  }
#endif
  return bl;
}

/// A register tile's accumulators at the start of a K chunk: the tile of c
/// (Acc), else the bias row or 0. Every tile, thin or full, sums k in order
/// into one accumulator per output: a row's result must not depend on which
/// tile it falls in (the row count of a packed batch decides that), so a text
/// embeds to the same bits alone or batched with others (encc-serve relies
/// on it; a thin tile with two alternating accumulator sets was up to 2e-7
/// off).
template <bool Acc, int MR, int V>
ENC_INLINE void tileAccInit(svec (&acc)[MR][V], const float *c, int64_t ldc, const float *bias) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      acc[r][v] = Acc    ? sLoad(c + r * ldc + v * kSvecLanes)
                  : bias ? sLoad(bias + v * kSvecLanes)
                         : sSplat(0.0f);
}

template <int MR, int V>
ENC_INLINE void tileAccStore(svec (&acc)[MR][V], float *c, int64_t ldc) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      sStore(c + r * ldc + v * kSvecLanes, acc[r][v]);
}

/// c[MR, 16*NP] = (Acc ? c : bias row or 0) + x[MR, kc] · panels[kc, 16*NP]
/// for NP panels `pstride` floats apart (w points at the chunk's first k).
/// With `next` (not null), also prefetches the same k of the NP panels there
/// into L2, a line per panel: the next column tile's weight then streams
/// from memory while this tile computes (sgemmBlock). BERT-base fp32 on one
/// Zen 4 thread: 1 x 8 1.26x, 1 x 16 1.10x; on two, where the weight stream
/// is at this machine's memory bandwidth, level (0.98-1.11x in three runs;
/// before the prefetch reached into the next unit, 0.95x: bench/RESULTS.md).
template <int MR, int NP, bool Acc>
__attribute__((noinline)) void
sgemmTile(const float *x, int64_t ldx, const float *w, int64_t pstride,
          int64_t kc, const float *bias, float *c, int64_t ldc, const float *next) {
  constexpr int VP = kSgemmPanel / kSvecLanes, V = NP * VP;
  svec acc[MR][V];
  tileAccInit<Acc>(acc, c, ldc, bias);
  for (int64_t k = 0; k < kc; ++k) {
    svec wv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      wv[v] = sLoad(w + (v / VP) * pstride + k * kSgemmPanel +
                    (v % VP) * kSvecLanes);
    if (next) {
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p)
        __builtin_prefetch(next + p * pstride + k * kSgemmPanel, 0, 2);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const svec xb = sSplat(x[r * ldx + k]);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v)
        acc[r][v] = sFma(xb, wv[v], acc[r][v]);
    }
  }
  tileAccStore(acc, c, ldc);
}

/// The bf16 form of sgemmTile: x [MR, kc] bf16 rows (ldx elements apart),
/// w the chunk's first k pair of NP bf16 panels (pstride elements apart),
/// kc even. `next` as for sgemmTile.
template <int MR, int NP, bool Acc>
__attribute__((noinline)) void
bgemmTile(const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t pstride,
          int64_t kc, const float *bias, float *c, int64_t ldc,
          const uint16_t *next) {
  constexpr int VP = kSgemmPanel / kSvecLanes, V = NP * VP;
  svec acc[MR][V];
  tileAccInit<Acc>(acc, c, ldc, bias);
  // One k pair: per column lane a 32-bit word holding (w[k], w[k+1]).
  typedef uint32_t pairs __attribute__((vector_size(sizeof(svec))));
  const int64_t kpairs = kc / 2;
  for (int64_t kp = 0; kp < kpairs; ++kp) {
    pairs wv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      std::memcpy(&wv[v], w + (v / VP) * pstride + kp * 2 * kSgemmPanel + (v % VP) * 2 * kSvecLanes,
                  sizeof(pairs));
    if (next) {
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p)
        __builtin_prefetch(next + p * pstride + kp * 2 * kSgemmPanel, 0, 2);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      uint32_t xp;
      std::memcpy(&xp, x + r * ldx + 2 * kp, sizeof(xp));
#if defined(__AVX512BF16__)
      const __m512bh xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(xp));
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], xb, (__m512bh)wv[v]);
#else
      uint32_t lo = xp << 16, hi = xp & 0xffff0000u;
      float x0, x1;
      std::memcpy(&x0, &lo, sizeof(x0));
      std::memcpy(&x1, &hi, sizeof(x1));
      const svec xb0 = sSplat(x0), xb1 = sSplat(x1);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        acc[r][v] = sFma(xb1, (svec)(wv[v] & 0xffff0000u), acc[r][v]);
        acc[r][v] = sFma(xb0, (svec)(wv[v] << 16), acc[r][v]);
      }
#endif
    }
  }
  tileAccStore(acc, c, ldc);
}

/// The tile over fp32 (sgemmTile) or bf16 (bgemmTile) operands, with the row
/// count m in [1, kSgemmMR] chosen at run time.
template <int NP, int MR = kSgemmMR, typename T>
ENC_INLINE void gemmTileRows(int64_t m, bool acc, const T *x, int64_t ldx,
                             const T *w, int64_t pstride, int64_t kc,
                             const float *bias, float *c, int64_t ldc,
                             const T *next) {
  if constexpr (MR > 1) {
    if (m < MR)
      return gemmTileRows<NP, MR - 1>(m, acc, x, ldx, w, pstride, kc, bias, c, ldc, next);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (acc)
      sgemmTile<MR, NP, true>(x, ldx, w, pstride, kc, bias, c, ldc, next);
    else
      sgemmTile<MR, NP, false>(x, ldx, w, pstride, kc, bias, c, ldc, next);
  } else {
    if (acc)
      bgemmTile<MR, NP, true>(x, ldx, w, pstride, kc, bias, c, ldc, next);
    else
      bgemmTile<MR, NP, false>(x, ldx, w, pstride, kc, bias, c, ldc, next);
  }
}

template <int Epi> ENC_INLINE float applyEpilogue(float v) {
  if (Epi == kEpiGelu)
    return gelu<kGeluErf>(v);
  if (Epi == kEpiGeluTanh)
    return gelu<kGeluTanh>(v);
  return v;
}

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// AMX (tdpbf16ps; tiles as enc_amx.h assigns them): 32 x 32 output tiles as
// 2 x 2 accumulator tiles of 16 x 16 fp32, A = 16 rows x 32 k of bf16 x (rows
// K apart), B = 16 k pairs x 16 columns of one packed panel (the panel layout
// of enc_bf16.h is the VNNI layout tdpbf16ps reads). The whole K
// accumulates in the tiles (K a multiple of 32); accumulators go through a
// 32 x 32 buffer for bias, epilogue and the columns past N.

/// sgemmBlock's unit through AMX (K a multiple of 32).
template <int Epi, typename Y>
void amxBlock(const uint16_t *x, const uint16_t *packed, const float *b, Y *y, int64_t K, int64_t N,
              int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const int64_t pstride = K * kSgemmPanel;
  const int64_t nc = j1 - j0;
  // A step is 32 k: 64 bytes of an x row, 16 k pairs (1024 bytes) of a panel.
  amxTiles</*Int8=*/false>(
      reinterpret_cast<const uint8_t *>(x + i0 * K), K * 2, i1 - i0,
      reinterpret_cast<const uint8_t *>(packed + (j0 / kSgemmPanel) * pstride), pstride * 2,
      (nc + kSgemmPanel - 1) / kSgemmPanel, K / 32, /*colsOuter=*/true, [&](const AmxTileAt &t, const float *c) {
        const int64_t j = t.b * kSgemmPanel, width = std::min<int64_t>(32, nc - j);
        // The tile's bias (0 without one), so the epilogue loops test no
        // pointer (a null test inside them becomes masked loads: see
        // q8EpilogueRows).
        alignas(64) float bias[32];
        for (int cc = 0; cc < 32; ++cc)
          bias[cc] = b && cc < width ? b[j0 + j + cc] : 0.0f;
        for (int r = 0; r < t.m; ++r) {
          Y *yr = y + (i0 + t.i + r) * N + j0 + j;
          const float *cr = c + r * 32;
          if (width == 32) { // fixed width: vectorised without remainder code
            for (int cc = 0; cc < 32; ++cc)
              storeOut(yr + cc, applyEpilogue<Epi>(cr[cc] + bias[cc]));
          } else {
            for (int64_t cc = 0; cc < width; ++cc)
              storeOut(yr + cc, applyEpilogue<Epi>(cr[cc] + bias[cc]));
          }
        }
      });
}
#endif

/// One (rows [i0, i1), columns [j0, j1)) unit; j0 a multiple of 16. T:
/// float, or uint16_t for bf16 operands (then K and kcMax are even). Y: the
/// output, float, or uint16_t for bf16 (an enc.to_bf16 fused in; then kcMax
/// >= K: a tile's fp32 sums never go through y).
template <int Epi, typename T, typename Y>
void sgemmBlock(const T *x, const T *packed, const float *b, Y *y,
                int64_t K, int64_t N, int64_t i0, int64_t i1, int64_t j0,
                int64_t j1, int64_t kcMax, int64_t jNext = -1) {
  constexpr int64_t kWide = kSgemmPanel * kSgemmNP;
  constexpr bool kBf16Out = std::is_same_v<Y, uint16_t>;
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
  if constexpr (std::is_same_v<T, uint16_t>)
    if (K % 32 == 0)
      return amxBlock<Epi>(x, packed, b, y, K, N, i0, i1, j0, j1);
#endif
  const int64_t pstride = K * kSgemmPanel;
  for (int64_t k0 = 0; k0 < K; k0 += kcMax) {
    const int64_t kc = std::min<int64_t>(kcMax, K - k0);
    const bool acc = k0 > 0, last = k0 + kc == K;
    for (int64_t j = j0; j < j1; j += kWide) {
      const int64_t nc = std::min<int64_t>(kWide, j1 - j);
      const int np = static_cast<int>((nc + kSgemmPanel - 1) / kSgemmPanel);
      const T *w = packed + (j / kSgemmPanel) * pstride + k0 * kSgemmPanel;
      // A partial tile (the last columns of N) goes through a padded buffer.
      alignas(64) float bpad[kWide];
      const float *bias = acc ? nullptr : b ? b + j : nullptr;
      if (b && !acc && nc < kWide) {
        for (int64_t c = 0; c < kWide; ++c)
          bpad[c] = c < nc ? b[j + c] : 0.0f;
        bias = bpad;
      }
      for (int64_t i = i0; i < i1; i += kSgemmMR) {
        const int64_t m = std::min<int64_t>(kSgemmMR, i1 - i);
        const T *xt = x + i * K + k0;
        // The tile's fp32 sums: in y itself, or in tmp for a partial tile
        // (and for bf16 outputs, rounded into y at the end).
        alignas(64) float tmp[kSgemmMR * kWide];
        float *c = tmp;
        int64_t ldc = kWide;
        if constexpr (!kBf16Out) {
          if (nc == kWide) {
            c = y + i * N + j;
            ldc = N;
          } else if (acc) {
            for (int64_t r = 0; r < m; ++r)
              for (int64_t cc = 0; cc < kWide; ++cc)
                tmp[r * kWide + cc] = cc < nc ? y[(i + r) * N + j + cc] : 0.0f;
          }
        }
        // With few rows (at most 4 tiles), the first row tile of a column
        // tile also prefetches the next one's weight (the last, that
        // of the task's next unit at jNext): the rest is computed from
        // cache, and the memory stream stood still until the next tile
        // missed. (At 1 x 128 on two threads, 64-row units, it cost 2-4 %.)
        const T *next = nullptr;
        if (i == i0 && i1 - i0 <= 4 * kSgemmMR)
          next = j + kWide < j1 ? w + kSgemmNP * pstride
                 : jNext >= 0   ? packed + (jNext / kSgemmPanel) * pstride + k0 * kSgemmPanel
                                : nullptr;
        if (np == kSgemmNP)
          gemmTileRows<kSgemmNP>(m, acc, xt, K, w, pstride, kc, bias, c, ldc, next);
        else
          gemmTileRows<1>(m, acc, xt, K, w, pstride, kc, bias, c, ldc, next);
        // Only the nc real columns: a partial tile's unused lanes hold nothing.
        if (last && Epi != kEpiNone) {
          if (nc == kWide) // fixed width: vectorised without remainder code
            for (int64_t r = 0; r < m; ++r)
              for (int64_t cc = 0; cc < kWide; ++cc)
                c[r * ldc + cc] = applyEpilogue<Epi>(c[r * ldc + cc]);
          else
            for (int64_t r = 0; r < m; ++r)
              for (int64_t cc = 0; cc < nc; ++cc)
                c[r * ldc + cc] = applyEpilogue<Epi>(c[r * ldc + cc]);
        }
        if (c == tmp) {
          if (nc == kWide) // fixed width: vectorised without remainder code
            for (int64_t r = 0; r < m; ++r)
              for (int64_t cc = 0; cc < kWide; ++cc)
                storeOut(y + (i + r) * N + j + cc, tmp[r * kWide + cc]);
          else
            for (int64_t r = 0; r < m; ++r)
              for (int64_t cc = 0; cc < nc; ++cc)
                storeOut(y + (i + r) * N + j + cc, tmp[r * kWide + cc]);
        }
      }
    }
  }
}

/// sgemmLinearRun with an explicit blocking (sgemm_bench compares them); T
/// and Y as for sgemmBlock (a bf16 output takes K in one chunk).
template <int Epi, typename T, typename Y>
void sgemmLinearRunWith(const T *x, const T *packed, const float *b,
                        Y *y, int64_t M, int64_t K, int64_t N,
                        int32_t task, int32_t numTasks,
                        const SgemmBlocking &bl) {
  // Blocks of at most bl.mc x bl.nc; with several tasks, cut finer (columns
  // down to bl.minNc, then rows down to 4 tiles) until there are
  // bl.unitsPerTask units per task; then even out the block sizes so that
  // the units are of equal work.
  constexpr int64_t kWide = kSgemmPanel * kSgemmNP;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t rowBlocks = ceilDiv(M, bl.mc), colBlocks = ceilDiv(N, bl.nc);
  while (numTasks > 1 &&
         rowBlocks * colBlocks < bl.unitsPerTask * int64_t(numTasks)) {
    if (N / colBlocks >= bl.minNc)
      ++colBlocks;
    else if (M / rowBlocks >= 4 * kSgemmMR)
      ++rowBlocks;
    else
      break;
  }
  const int64_t mc = ceilDiv(ceilDiv(M, rowBlocks), kSgemmMR) * kSgemmMR;
  const int64_t nc = ceilDiv(ceilDiv(N, colBlocks), kWide) * kWide;
  rowBlocks = ceilDiv(M, mc);
  colBlocks = ceilDiv(N, nc);
  int64_t u0, u1;
  taskShare(rowBlocks * colBlocks, task, numTasks, u0, u1);
  auto colBlock = [&](int64_t u) { return bl.colMajor ? u / rowBlocks : u % colBlocks; };
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t rb = bl.colMajor ? u % rowBlocks : u / colBlocks;
    const int64_t i0 = rb * mc, i1 = std::min(M, i0 + mc);
    const int64_t j0 = colBlock(u) * nc, j1 = std::min(N, j0 + nc);
    // The task's next unit's first columns: prefetched with this one's last.
    sgemmBlock<Epi>(x, packed, b, y, K, N, i0, i1, j0, j1,
                    std::is_same_v<Y, uint16_t> ? std::max(K, bl.kc) : bl.kc,
                    u + 1 < u1 ? colBlock(u + 1) * nc : int64_t(-1));
  }
}

/// y [M, N] = epilogue(x [M, K] · Wᵀ + b), W packed by packWeightsF32, b [N]
/// or null; any M, N, K >= 1.
template <int Epi>
void sgemmLinearRun(const float *x, const float *packed, const float *b,
                    float *y, int64_t M, int64_t K, int64_t N, int32_t task,
                    int32_t numTasks) {
  sgemmLinearRunWith<Epi>(x, packed, b, y, M, K, N, task, numTasks,
                          sgemmBlocking(M, K, N));
}

/// y [M, N] = epilogue(x [M, K] · Wᵀ + b) over bf16 x and W (W packed by
/// packWeightsBf16), fp32 products and sums; K even, any M, N >= 1. y:
/// float, or uint16_t (each output rounded to bf16, as enc.to_bf16 would).
template <int Epi, typename Y>
void bgemmLinearRun(const uint16_t *x, const uint16_t *packed, const float *b,
                    Y *y, int64_t M, int64_t K, int64_t N, int32_t task,
                    int32_t numTasks) {
  sgemmLinearRunWith<Epi>(x, packed, b, y, M, K, N, task, numTasks,
                          bgemmBlocking(M, K, N));
}

/// enc.linear: x [M, K], packed W (packWeightsF32 of [N, K]), b [N] or null,
/// y [M, N].
template <int K, int N, int Epi>
void linear(const float *x, const float *packed, const float *b, float *y,
            int64_t M, int32_t task, int32_t numTasks) {
  sgemmLinearRun<Epi>(x, packed, b, y, M, K, N, task, numTasks);
}

/// enc.linear over bf16 x [M, K] and W (packWeightsBf16 of [N, K]); y
/// float, or uint16_t (an enc.to_bf16 of the result fused in).
template <int K, int N, int Epi, typename Y>
void linearBf16(const uint16_t *x, const uint16_t *packed, const float *b,
                Y *y, int64_t M, int32_t task, int32_t numTasks) {
  static_assert(K % 2 == 0, "bf16 linears take an even K");
  bgemmLinearRun<Epi>(x, packed, b, y, M, K, N, task, numTasks);
}

} // inline namespace ENC_SGEMM_VARIANT

} // namespace enc_kernels

#endif // ENC_KERNELS_SGEMM_H
