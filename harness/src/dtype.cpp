#include "dtype.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "glabench/half_precision.hpp"
#include "glabench/reference/parallel_for.hpp"

namespace glabench {

using half_precision::bf16_to_float;
using half_precision::float_to_bf16;
using half_precision::float_to_fp16;
using half_precision::fp16_to_float;

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
  reference::for_blocks(t.data.size(), [&](size_t i) {
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
  });
  return out;
}

tensor unpack(const std::byte* src, const std::vector<int64_t>& shape, dtype d) {
  tensor t(shape);
  reference::for_blocks(t.data.size(), [&](size_t i) {
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
  });
  return t;
}

tensor round_to(const tensor& t, dtype d) {
  if (d == dtype::fp64) return t;
  return unpack(pack(t, d).data(), t.shape, d);
}

double round_value(double x, dtype d) {
  switch (d) {
    case dtype::fp64:
      return x;
    case dtype::fp32:
      return static_cast<float>(x);
    case dtype::fp16:
      return fp16_to_float(float_to_fp16(static_cast<float>(x)));
    case dtype::bf16:
      return bf16_to_float(float_to_bf16(static_cast<float>(x)));
  }
  return x;
}

double smallest_normal(dtype d) {
  switch (d) {
    case dtype::fp64:
      return std::numeric_limits<double>::min();
    case dtype::fp16:
      return 6.103515625e-05;  // 2^-14
    case dtype::fp32:
    case dtype::bf16:
      return std::numeric_limits<float>::min();
  }
  return 0;
}

}  // namespace glabench
