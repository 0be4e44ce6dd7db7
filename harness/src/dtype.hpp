// Storage dtypes a run can use (their DLPack codes: abi_vocabulary.hpp), default tolerances
// (docs/design.md §5), and conversion of fp64 host tensors to and from their packed bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "glabench/reference/tensor.hpp"

namespace glabench {

enum class dtype { fp64, fp32, fp16, bf16 };

inline constexpr dtype kAllDtypes[] = {dtype::fp64, dtype::fp32, dtype::fp16, dtype::bf16};

std::string_view dtype_name(dtype d);
std::optional<dtype> parse_dtype(std::string_view name);
size_t dtype_bytes(dtype d);
// bf16 and fp16: where lse (docs/design.md §1) and, for a backend that asks, the states
// are float32 instead (backend.h).
inline bool is_16_bit(dtype d) {
  return d == dtype::bf16 || d == dtype::fp16;
}

// Default pass threshold on rel_l2: fp64 1e-12, fp32 1e-5, fp16 5e-3, bf16 1e-2.
double default_tolerance(dtype d);

// Rounds each value to d (round to nearest even) and packs it.
std::vector<std::byte> pack(const tensor& t, dtype d);
// Unpacks values of dtype d into an fp64 tensor of the given shape.
tensor unpack(const std::byte* bytes, const std::vector<int64_t>& shape, dtype d);
// The values the backend actually sees: t rounded to d, back in fp64.
tensor round_to(const tensor& t, dtype d);
// x rounded to d, back in fp64.
double round_value(double x, dtype d);
// The smallest positive normal value of d: below it, d holds a value only to an absolute
// step (fp16: 2^-24), not a relative one.
double smallest_normal(dtype d);

}  // namespace glabench
