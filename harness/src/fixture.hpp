// A fixture (docs/design.md §4): the problem, fp64 inputs, and the fp64 expected results.
// read_fixture validates attributes, ranks, shapes, dtypes, finiteness, gate sign and
// the presence of expected gradients, and names file, field and rule in every error.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "glabench/reference/problem.hpp"

namespace glabench {

inline constexpr int kFixtureSchemaVersion = 1;

struct fixture {
  std::string path;
  std::string description;
  problem prob;
  op_inputs inputs;  // d_o and dht present when gradients are expected
  op_outputs expected;
  std::optional<op_gradients> expected_grads;

  bool has_gradients() const { return inputs.d_o.has_value(); }
  std::string name() const;  // file name without folder and .h5
};

class fixture_error : public std::runtime_error {
 public:
  fixture_error(const std::string& file, const std::string& field, const std::string& rule)
      : std::runtime_error(file + ": " + field + ": " + rule),
        file_(file),
        field_(field),
        rule_(rule) {}
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& rule() const { return rule_; }

 private:
  std::string file_, field_, rule_;
};

// Throws fixture_error.
fixture read_fixture(const std::string& path);

// Writes to a temporary file beside `path` and renames it into place, so a failed
// write leaves nothing half-written. Throws std::runtime_error.
void write_fixture(const std::string& path, const fixture& f);

}  // namespace glabench
