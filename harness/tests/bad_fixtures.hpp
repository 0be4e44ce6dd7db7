// Malformed fixtures, one per validation rule of the reader, each derived from a valid
// fixture by editing it with the HDF5 API. Shared by the reader's unit tests and the
// command-line test that checks exit code 2 and the message.
#pragma once

#include <string>
#include <vector>

namespace glabench::testing {

struct bad_fixture {
  std::string path;
  std::string field;          // the field the error must name
  std::string rule_fragment;  // a phrase the rule must contain
};

// Writes every malformed variant into `dir` and returns them.
std::vector<bad_fixture> write_bad_fixtures(const std::string& dir);

}  // namespace glabench::testing
