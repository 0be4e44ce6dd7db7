// What the bench's timed calls wrote, checked against what its quick verify saw: the quick
// verify checks one call, the samples time many, and a kernel right once and wrong
// afterwards (NaN, stale or racy outputs in later calls, a CUDA graph replay that does
// not redo the work) must not get a time. The bench poisons the outputs before every
// sample, so the last timed call's outputs are its own; after sampling they are
// compared with the quick verify's, every element of every output, bit for bit, or —
// for a backend that is not deterministic — within the dtype's verify threshold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"

namespace glabench {

// Every output tensor of one call, as stored (in its dtype), by name.
struct output_snapshot {
  struct entry {
    std::string name;  // "o", "ht", "dq", …
    dtype type;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
  };
  std::vector<entry> tensors;
};

struct timed_outputs_check {
  bool identical = false;  // bit for bit, every tensor
  double max_rel_l2 = 0;   // the largest rel_l2 of the timed outputs against the verified ones
  std::string failure;     // why the row fails; empty when it passes
};

// `threshold`: the dtype's verify threshold on rel_l2. Fails on any NaN or Inf in the
// timed outputs, on a tensor missing from either snapshot, and on a rel_l2 over it.
timed_outputs_check check_timed_outputs(const output_snapshot& verified,
                                        const output_snapshot& timed, double threshold);

// How many elements of `bytes` (values of dtype d) are NaN or ±Inf, from their bits.
size_t count_non_finite(const std::vector<std::byte>& bytes, dtype d);

}  // namespace glabench
