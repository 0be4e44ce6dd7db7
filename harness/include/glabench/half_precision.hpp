// The 16-bit storage formats on the host: float ↔ bf16 and float ↔ fp16 (IEEE binary16),
// rounding to nearest even, NaN kept a NaN, fp16's overflow to ±inf and its subnormals
// exact. The harness rounds fixtures and bench inputs with these (dtype.cpp); a CPU
// backend reads and writes 16-bit tensors with them. Header-only, C++17.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace glabench::half_precision {

inline uint32_t bits_of(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
inline float float_of(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x = bits_of(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);  // stay a NaN
  x += 0x7fff + ((x >> 16) & 1);                                      // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16_to_float(uint16_t h) {
  return float_of(static_cast<uint32_t>(h) << 16);
}

inline uint16_t float_to_fp16(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t biased = static_cast<int32_t>((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffff;
  if (biased == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  const int32_t exp = biased - 127 + 15;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {  // subnormal half
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry rounds into the exponent
  return static_cast<uint16_t>(h);
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float value = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -value : value;
  }
  if (exp == 31) return float_of(sign | 0x7f800000 | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace glabench::half_precision
