// Malformed fixtures, one per validation rule of the reader, each derived from a valid
// fixture by editing it with the HDF5 API. Shared by the reader's unit tests and the
// command-line test that checks exit code 2 and the message.
#pragma once

#include <string>
#include <vector>

#include "fixture.hpp"

namespace glabench::testing {

struct bad_fixture {
  std::string path;
  std::string field;          // the field the error must name
  std::string rule_fragment;  // a phrase the rule must contain
};

// A small valid packed batch (schema version 2) of `op`: B1 T6 H2 K4 V4, sequences of 2, 1
// and 3 tokens, with h0 (gla, rwkv6), do and dht; expected values from the reference.
fixture packed_fixture(op_kind op = op_kind::gla, bool causal = true);

// Writes every malformed variant into `dir` and returns them.
std::vector<bad_fixture> write_bad_fixtures(const std::string& dir);

}  // namespace glabench::testing
