#include "dtype.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace glabench {
namespace {

uint16_t float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);  // stay a NaN
  x += 0x7fff + ((x >> 16) & 1);                                      // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint16_t float_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
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

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float value = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -value : value;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace

std::string_view dtype_name(dtype d) {
  switch (d) {
    case dtype::fp64:
      return "fp64";
    case dtype::fp32:
      return "fp32";
    case dtype::fp16:
      return "fp16";
    case dtype::bf16:
      return "bf16";
  }
  return "?";
}

std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype d : kAllDtypes)
    if (dtype_name(d) == name) return d;
  return std::nullopt;
}

size_t dtype_bytes(dtype d) {
  switch (d) {
    case dtype::fp64:
      return 8;
    case dtype::fp32:
      return 4;
    case dtype::fp16:
    case dtype::bf16:
      return 2;
  }
  return 0;
}

double default_tolerance(dtype d) {
  switch (d) {
    case dtype::fp64:
      return 1e-12;
    case dtype::fp32:
      return 1e-5;
    case dtype::fp16:
      return 5e-3;
    case dtype::bf16:
      return 1e-2;
  }
  return 0;
}

std::vector<std::byte> pack(const tensor& t, dtype d) {
  std::vector<std::byte> out(t.data.size() * dtype_bytes(d));
  std::byte* dst = out.data();
  for (size_t i = 0; i < t.data.size(); ++i) {
    const double x = t.data[i];
    switch (d) {
      case dtype::fp64:
        std::memcpy(dst + 8 * i, &x, 8);
        break;
      case dtype::fp32: {
        const float f = static_cast<float>(x);
        std::memcpy(dst + 4 * i, &f, 4);
        break;
      }
      case dtype::fp16: {
        const uint16_t h = float_to_fp16(static_cast<float>(x));
        std::memcpy(dst + 2 * i, &h, 2);
        break;
      }
      case dtype::bf16: {
        const uint16_t h = float_to_bf16(static_cast<float>(x));
        std::memcpy(dst + 2 * i, &h, 2);
        break;
      }
    }
  }
  return out;
}

tensor unpack(const std::byte* src, const std::vector<int64_t>& shape, dtype d) {
  tensor t(shape);
  for (size_t i = 0; i < t.data.size(); ++i) {
    switch (d) {
      case dtype::fp64:
        std::memcpy(&t.data[i], src + 8 * i, 8);
        break;
      case dtype::fp32: {
        float f;
        std::memcpy(&f, src + 4 * i, 4);
        t.data[i] = f;
        break;
      }
      case dtype::fp16:
      case dtype::bf16: {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        t.data[i] = d == dtype::fp16 ? fp16_to_float(h) : bf16_to_float(h);
        break;
      }
    }
  }
  return t;
}

tensor round_to(const tensor& t, dtype d) {
  if (d == dtype::fp64) return t;
  return unpack(pack(t, d).data(), t.shape, d);
}

}  // namespace glabench
