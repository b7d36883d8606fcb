//===- enc_amx.h - AMX tile configuration shared by the AMX GEMMs -*- C++ -*-===//
//
// The bf16 (enc_sgemm.h) and int8 (enc_qgemm.h) AMX paths use one tile
// assignment: tmm0..3 accumulators of a 32 x 32 output tile (2 row blocks x 2
// column blocks of 16 x 16 fp32/int32), tmm4..5 A (16 rows x 64 bytes each),
// tmm6..7 B (16 rows of 64 bytes: k pairs of bf16 or k quads of int8 for 16
// columns). Every row is 64 bytes; only the row counts of the C and A tiles
// vary (m0 rows in the first row block, m1 in the second, m1 = 0 unused).
// Included only where __AMX_TILE__ is defined. The process must hold Linux's
// tile-data permission (arch_prctl ARCH_REQ_XCOMP_PERM, which the runtime's
// CPU feature check requests) before the first tile instruction.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_AMX_H
#define ENC_KERNELS_AMX_H

#include <algorithm>
#include <cstdint>
#include <immintrin.h>
#include <type_traits>

// amxTileSteps names both dot products; GCC's headers define their macros
// (inline asm) whatever the flags, and only the one instantiated is emitted:
// tdpbf16ps needs -mamx-bf16 at run time, tdpbusd -mamx-int8 (the
// x86-64-v4-amx level enables both).

namespace enc_kernels {

/// The 64-byte LDTILECFG operand (palette 1).
struct alignas(64) AmxConfig {
  uint8_t palette = 1, startRow = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
  AmxConfig(int m0, int m1) {
    for (int t = 0; t < 8; ++t)
      colsb[t] = 64;
    rows[0] = rows[1] = rows[4] = static_cast<uint8_t>(m0);
    rows[2] = rows[3] = rows[5] = static_cast<uint8_t>(m1);
    rows[6] = rows[7] = 16;
    if (m1 == 0)
      colsb[2] = colsb[3] = colsb[5] = 0;
  }
};

/// LDTILECFG of the whole 64 bytes. Not GCC 12's _tile_loadconfig: its asm
/// names only the first 8 bytes as read, so once it is inlined the other
/// stores of a fresh configuration are dead to the compiler and may be
/// dropped (seen: a general protection fault on a configuration of
/// leftover stack bytes).
inline void amxLoadConfig(const AmxConfig &cfg) { __asm__ volatile("ldtilecfg %0" ::"m"(cfg)); }

/// Loads the configuration for (m0, m1) unless it is the one loaded last
/// (`loaded` starts {-1, -1}); loading zeroes every tile.
inline void amxConfigure(int m0, int m1, int (&loaded)[2]) {
  if (m0 == loaded[0] && m1 == loaded[1])
    return;
  const AmxConfig cfg(m0, m1);
  amxLoadConfig(cfg);
  loaded[0] = m0;
  loaded[1] = m1;
}

/// c (32 x 32 accumulators, 128-byte rows) = sum over `steps` of A x B:
/// A = rows of x (ldx bytes apart) advancing 64 bytes a step, B = 16 rows of
/// 64 bytes advancing 1024 bytes a step, the second column block's B
/// `panelBytes` further on. Int8: tdpbusd (u8 x s8 -> int32), else
/// tdpbf16ps (bf16 pairs -> fp32). The second row block (rows 16..m) only
/// with TwoRows, the second column block only with TwoCols.
template <bool Int8, bool TwoRows, bool TwoCols>
__attribute__((noinline)) void amxTileSteps(const uint8_t *x, int64_t ldx, const uint8_t *w, int64_t panelBytes,
                                            int64_t steps, void *c) {
  _tile_zero(0);
  if (TwoCols)
    _tile_zero(1);
  if (TwoRows) {
    _tile_zero(2);
    if (TwoCols)
      _tile_zero(3);
  }
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, x + s * 64, ldx);
    _tile_loadd(6, w + s * 1024, 64);
    if (TwoCols)
      _tile_loadd(7, w + panelBytes + s * 1024, 64);
    if (TwoRows)
      _tile_loadd(5, x + 16 * ldx + s * 64, ldx);
    if constexpr (Int8) {
      _tile_dpbusd(0, 4, 6);
      if (TwoCols)
        _tile_dpbusd(1, 4, 7);
      if (TwoRows) {
        _tile_dpbusd(2, 5, 6);
        if (TwoCols)
          _tile_dpbusd(3, 5, 7);
      }
    } else {
      _tile_dpbf16ps(0, 4, 6);
      if (TwoCols)
        _tile_dpbf16ps(1, 4, 7);
      if (TwoRows) {
        _tile_dpbf16ps(2, 5, 6);
        if (TwoCols)
          _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  auto *out = static_cast<uint8_t *>(c);
  _tile_stored(0, out, 128);
  if (TwoCols)
    _tile_stored(1, out + 64, 128);
  if (TwoRows) {
    _tile_stored(2, out + 16 * 128, 128);
    if (TwoCols)
      _tile_stored(3, out + 16 * 128 + 64, 128);
  }
  // GCC 12's tile load and store macros name no memory operand: keep the
  // caller's reads of c after the stores.
  __asm__ volatile("" ::: "memory");
}

/// Where an output tile of amxTiles lies: rows [i, i + m) (m <= 32) and the
/// 16-column blocks [b, b + nb) (nb 1 or 2), counted from amxTiles' origin.
struct AmxTileAt {
  int64_t i;
  int m;
  int64_t b;
  int nb;
};

/// All 32 x 32 output tiles of rows [0, rows) x 16-column blocks [0, blocks)
/// (x at row 0, ldx bytes a row; block b's B data at w + b * panelBytes;
/// `steps` steps of amxTileSteps each), column pairs outermost when
/// colsOuter (a pair's B data then serves every row block while it is in
/// L1/L2: the order for weights that do not stay in L2), else row blocks
/// outermost. Each tile's accumulators (Acc: int32 for Int8, else float;
/// 32 x 32, rows 32 apart) go to epilogue(at, acc). Returns with the tile
/// state released.
///
/// Tried and not kept (qgemm_bench, AMX Xeon): running a tile's epilogue
/// in pieces between the next tile's steps, with 2 x 2 accumulators or with
/// 16-row halves alternating between two accumulator pairs. Neither
/// overlapped the vector epilogue with the tile products here: a 3-op
/// epilogue cost the same 25-45 % of the GEMM's time either way.
template <bool Int8, class Epilogue>
inline void amxTiles(const uint8_t *x, int64_t ldx, int64_t rows, const uint8_t *w, int64_t panelBytes,
                     int64_t blocks, int64_t steps, bool colsOuter, Epilogue &&epilogue) {
  using Acc = std::conditional_t<Int8, int32_t, float>;
  alignas(64) Acc c[32 * 32];
  int loaded[2] = {-1, -1};
  auto tile = [&](int64_t i, int64_t b) {
    const int m = int(std::min<int64_t>(32, rows - i)), m0 = std::min(16, m), m1 = m - m0;
    const int nb = b + 1 < blocks ? 2 : 1;
    amxConfigure(m0, m1, loaded);
    const uint8_t *xt = x + i * ldx, *wt = w + b * panelBytes;
    if (m1 > 0)
      nb == 2 ? amxTileSteps<Int8, true, true>(xt, ldx, wt, panelBytes, steps, c)
              : amxTileSteps<Int8, true, false>(xt, ldx, wt, panelBytes, steps, c);
    else
      nb == 2 ? amxTileSteps<Int8, false, true>(xt, ldx, wt, panelBytes, steps, c)
              : amxTileSteps<Int8, false, false>(xt, ldx, wt, panelBytes, steps, c);
    epilogue(AmxTileAt{i, m, b, nb}, static_cast<const Acc *>(c));
  };
  if (colsOuter) {
    for (int64_t b = 0; b < blocks; b += 2)
      for (int64_t i = 0; i < rows; i += 32)
        tile(i, b);
  } else {
    for (int64_t i = 0; i < rows; i += 32)
      for (int64_t b = 0; b < blocks; b += 2)
        tile(i, b);
  }
  _tile_release();
}

} // namespace enc_kernels

#endif // ENC_KERNELS_AMX_H
