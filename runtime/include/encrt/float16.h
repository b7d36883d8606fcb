/*===- float16.h - IEEE half and bfloat16 conversions ---------------------===*
 *
 * The one definition of the 16-bit float conversions that the HF frontend
 * (F16/BF16 safetensors), the CUDA code generator (fp16/bf16 weights), the
 * runtime (random weights) and the tests use. Pure integer arithmetic: exact,
 * round-to-nearest-even, NaN stays NaN, no libm.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_FLOAT16_H
#define ENCRT_FLOAT16_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline uint32_t encm_float_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

static inline float encm_bits_float(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* IEEE binary16 -> float (exact). */
static inline float encm_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0)
      return encm_bits_float(sign);
    int e = -1; /* subnormal: renormalise */
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400u));
    return encm_bits_float(sign | (uint32_t)(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13);
  }
  if (exp == 0x1f)
    return encm_bits_float(sign | 0x7f800000u | mant << 13); /* inf / nan */
  return encm_bits_float(sign | (exp + 127 - 15) << 23 | mant << 13);
}

/* float -> IEEE binary16, round to nearest even; overflow to infinity. */
static inline uint16_t encm_f32_to_f16(float f) {
  const uint32_t x = encm_float_bits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (ax >= 0x477ff000u)               /* >= 65520 rounds to infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) { /* below 2^-14: a subnormal half (or zero) */
    const uint32_t e = ax >> 23;
    if (e < 102) /* below 2^-25: rounds to zero */
      return sign;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e; /* 14..24 */
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u)))
      ++h;
    return (uint16_t)(sign | h);
  }
  const uint32_t exp = (ax >> 23) - 127 + 15, mant = ax & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return (uint16_t)(sign | h);
}

/* bfloat16 -> float (exact). */
static inline float encm_bf16_to_f32(uint16_t b) { return encm_bits_float((uint32_t)b << 16); }

/* float -> bfloat16, round to nearest even; NaN stays a quiet NaN. */
static inline uint16_t encm_f32_to_bf16(float f) {
  uint32_t x = encm_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_FLOAT16_H */
