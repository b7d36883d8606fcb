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

#include <cstdint>
#include <immintrin.h>

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

/// Loads the configuration for (m0, m1) unless it is the one loaded last
/// (`loaded` starts {-1, -1}); loading zeroes every tile.
inline void amxConfigure(int m0, int m1, int (&loaded)[2]) {
  if (m0 == loaded[0] && m1 == loaded[1])
    return;
  const AmxConfig cfg(m0, m1);
  _tile_loadconfig(&cfg);
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
}

/// amxTileSteps with the row and column blocks chosen at run time.
template <bool Int8>
inline void amxTile(bool twoRows, bool twoCols, const uint8_t *x, int64_t ldx, const uint8_t *w,
                    int64_t panelBytes, int64_t steps, void *c) {
  if (twoRows)
    twoCols ? amxTileSteps<Int8, true, true>(x, ldx, w, panelBytes, steps, c)
            : amxTileSteps<Int8, true, false>(x, ldx, w, panelBytes, steps, c);
  else
    twoCols ? amxTileSteps<Int8, false, true>(x, ldx, w, panelBytes, steps, c)
            : amxTileSteps<Int8, false, false>(x, ldx, w, panelBytes, steps, c);
}

} // namespace enc_kernels

#endif // ENC_KERNELS_AMX_H
