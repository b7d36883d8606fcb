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

} // namespace enc_kernels

#endif // ENC_KERNELS_AMX_H
