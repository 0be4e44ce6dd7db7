// A fixture (docs/design.md §4): the problem, fp64 inputs, and the fp64 expected results.
// read_fixture validates the file's kind, its links, attributes (one value of the right
// class each), the memory it needs, ranks, shapes, dtypes, finiteness, gate sign, the
// packed batch's offsets (cu_seqlens, schema version 2) and the presence of expected
// gradients, and names file, field and rule in every error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "glabench/reference/problem.hpp"

namespace glabench {

// The newest schema version, which read_fixture reads along with every earlier one.
// Version 2 added the packed variable-length batch (/inputs/cu_seqlens); write_fixture
// writes version 1 for a fixture without one, so that readers of version 1 still read it.
inline constexpr int kFixtureSchemaVersion = 2;
inline constexpr int kFirstFixtureSchemaVersion = 1;
// The version that a fixture of this problem needs.
inline int fixture_schema_version(const problem& p) {
  return p.varlen() ? 2 : 1;
}

struct fixture {
  std::string path;
  std::string description;
  problem prob;      // prob.cu_seqlens: a packed batch (schema version 2), states [N,H,K,V]
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

// Half of this machine's physical memory (8 GiB where it cannot be found out).
uint64_t default_max_fixture_bytes();

// Limits on what read_fixture reads.
struct fixture_read_options {
  // The most memory a fixture's datasets may need, computed from its attributes before
  // anything is allocated; a larger fixture is refused (`--max-fixture-bytes`).
  uint64_t max_bytes = default_max_fixture_bytes();
  // Read the file in a child process first (contained_run.hpp), so that one that crashes
  // libhdf5 is refused; off only for a file this run has already read so.
  bool in_child_first = true;
};

// Throws fixture_error. Opens only regular files (never a FIFO, device or socket), and
// only fixtures whose datasets are hard links to data stored in the file itself. Reads the
// file in a child process first (fixture_read_options::in_child_first): one that crashes
// libhdf5 is refused, not a crash here.
fixture read_fixture(const std::string& path, const fixture_read_options& options = {});

// Writes to a temporary file beside `path` and renames it into place, so a failed
// write leaves nothing half-written. Throws std::runtime_error.
void write_fixture(const std::string& path, const fixture& f);

}  // namespace glabench
