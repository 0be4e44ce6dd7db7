// A call at 16-bit storage (bf16, fp16) run in fp32: every tensor widened to fp32 on the
// way in (glabench/half_precision.hpp), the outputs rounded back on the way out, each to
// its own tensor's dtype (o and the gradients to the storage dtype; ht and dh0 to the state
// dtype, fp32 under ABI 1.5's GLABENCH_FEATURE_STATE_FP32). The problem and the arguments
// are copied as far as the harness's struct_size reaches, so a harness of any minor
// version is read safely.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <stdexcept>
#include <vector>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "glabench/half_precision.hpp"

namespace glabench::naive {

// The struct the harness passed, as far as its struct_size reaches; the rest zero.
template <typename T>
T copy_of(const T& x) {
  T out{};
  std::memcpy(static_cast<void*>(&out), &x, std::min(x.struct_size, sizeof(T)));
  out.struct_size = std::min(x.struct_size, sizeof(T));
  return out;
}

class widened_call {
 public:
  // x in fp32 (a copy, widened), or null where x is.
  const DLTensor* in(const DLTensor* x) {
    if (!x) return nullptr;
    slot& s = add(*x, nullptr);
    for (size_t i = 0; i < s.values.size(); ++i) s.values[i] = read(*x, i);
    return &s.view;
  }
  // An fp32 tensor of x's shape, written back into x by narrow(); null where x is. It
  // starts as NaN, so an element the fp32 loop leaves unwritten comes back NaN, as the
  // harness's poisoned tensor would have shown it.
  DLTensor* out(DLTensor* x) {
    if (!x) return nullptr;
    slot& s = add(*x, x);
    std::fill(s.values.begin(), s.values.end(), std::numeric_limits<float>::quiet_NaN());
    return &s.view;
  }
  // Every out() tensor rounded into its own.
  void narrow() const {
    for (const slot& s : slots_)
      if (s.target)
        for (size_t i = 0; i < s.values.size(); ++i) write(*s.target, i, s.values[i]);
  }

 private:
  struct slot {
    std::vector<float> values;
    std::vector<int64_t> shape;
    DLTensor view;
    DLTensor* target;
  };
  std::deque<slot> slots_;  // stable addresses: the views point into them

  static size_t elements(const DLTensor& x) {
    size_t n = 1;
    for (int d = 0; d < x.ndim; ++d) n *= static_cast<size_t>(x.shape[d]);
    return n;
  }
  slot& add(const DLTensor& x, DLTensor* target) {
    slot& s = slots_.emplace_back();
    s.values.assign(elements(x), 0.0f);
    s.shape.assign(x.shape, x.shape + x.ndim);
    s.view = x;
    s.view.data = s.values.data();
    s.view.byte_offset = 0;
    s.view.dtype = backend_support::kFloat32;
    s.view.shape = s.shape.data();
    s.view.strides = nullptr;
    s.target = target;
    return s;
  }
  static float read(const DLTensor& x, size_t i) {
    if (x.dtype.bits == 32) return backend_support::data_of<const float>(&x)[i];
    if (x.dtype.bits != 16)
      throw std::invalid_argument("a 16-bit call holds a tensor of neither 16 nor 32 bits");
    const uint16_t h = backend_support::data_of<const uint16_t>(&x)[i];
    return x.dtype.code == kDLBfloat ? half_precision::bf16_to_float(h)
                                     : half_precision::fp16_to_float(h);
  }
  static void write(DLTensor& x, size_t i, float value) {
    if (x.dtype.bits == 32) {
      backend_support::data_of<float>(&x)[i] = value;
      return;
    }
    backend_support::data_of<uint16_t>(&x)[i] = x.dtype.code == kDLBfloat
                                                    ? half_precision::float_to_bf16(value)
                                                    : half_precision::float_to_fp16(value);
  }
};

}  // namespace glabench::naive
