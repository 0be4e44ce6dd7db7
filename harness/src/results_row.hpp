// The fields of a results row (an entry of "benchmarks", bench_results.hpp), described
// once: each field's key, the shape of its JSON value, what the writer writes for a
// bench_row and how the readers check what they read and set it in one. The writer
// (to_json), the streaming reader (bench_results_from_text) and the reader of parsed
// documents (bench_results_from_json, worker replies) all go by this one table, and so
// do a row's checks by theirs.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "bench_results.hpp"
#include "results_field.hpp"

namespace glabench {

// The JSON a field holds, as the readers collect it (raw_value).
enum class field_shape {
  scalar,   // a string, number, boolean or null
  numbers,  // an array of numbers (samples_ms)
  scalars,  // an array of scalars (devices)
  checks,   // an array of objects with the check fields (checks)
  object,   // an object, kept whole (backend_report)
};

// One field of a row (Target bench_row) or of a check (Target tensor_check).
template <typename Target>
struct results_field {
  std::string_view key;  // (a literal: its data() ends with a NUL)
  field_shape shape;
  // What the writer writes for `t`; a discarded value leaves the key out.
  nlohmann::json (*write)(const Target& t);
  // Checks the value as read (absent: !v.present()) and sets it in `t`, which holds the
  // fields before it in the table already. Null for a field that is only written
  // (Google Benchmark's, and the statistics, which a reader computes from the samples).
  void (*read)(raw_value& v, const field_read& at, Target& t);
};

// A row as read: its fields by their index in the row table (row_field_index), each
// absent until the reader finds it.
struct raw_row {
  bool object = true;  // false: the entry is not a JSON object
  std::vector<raw_value> fields;
  raw_row();
  void clear();  // every field absent again (what they hold stays allocated)
};

// The index of the row field a reader reads under `key`, or -1 (a field only written, or
// unknown: skipped); the same for a check's fields.
int row_field_index(std::string_view key);
int check_field_index(std::string_view key);
field_shape row_field_shape(int index);
size_t check_field_count();

// The row as JSON, every field of the table.
nlohmann::json row_to_json(const bench_row& r);
// The row read from `raw` (its strings and samples are moved out), each field checked
// in the table's order; `where` is the row's index. Throws results_error.
bench_row row_from_raw(raw_row& raw, const row_path& where, const results_checks& rd);

}  // namespace glabench
