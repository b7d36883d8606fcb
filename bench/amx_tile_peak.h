//===- amx_tile_peak.h - The AMX tile units' compute peak loop --*- C++ -*-===//
//
// Four accumulator tiles (tmm0..3, 16 x 16 int32 / fp32) fed by two A tiles
// (tmm4, 5) and two B tiles (tmm6, 7) of 16 rows x 64 bytes, as enc_amx.h
// assigns them, so that no tile product waits for the one before it; the
// operands stay in the tiles (the compute peak, not the loads). Used by
// qgemm_bench (tdpbusd, tdpbf16ps) and sgemm_bench_v4amx (tdpbf16ps). The
// caller holds Linux's tile-data permission (AmxPermission.h).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_BENCH_AMX_TILE_PEAK_H
#define ENC_BENCH_AMX_TILE_PEAK_H

#include "enc_amx.h"

#include <benchmark/benchmark.h>

#include <cstdint>

/// Runs `rounds` rounds of four tile products (tdpbusd when Int8, else
/// tdpbf16ps) and returns the operations they did: 16 x 16 x 64 MACs per
/// tdpbusd, 16 x 16 x 32 per tdpbf16ps, two operations per MAC.
template <bool Int8> double amxTileProducts(int64_t rounds) {
  const enc_kernels::AmxConfig cfg(16, 16);
  enc_kernels::amxLoadConfig(cfg);
  alignas(64) static uint8_t operand[16 * 64] = {1}, out[16 * 64];
  _tile_zero(0); // tile numbers are immediates
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (int64_t r = 0; r < rounds; ++r) {
    if constexpr (Int8) {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    } else {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, out, 64);
  _tile_stored(3, out, 64);
  benchmark::DoNotOptimize(out[5]);
  return double(rounds) * 4 * 16 * 16 * (Int8 ? 64 : 32) * 2.0;
}

#endif
