// libFuzzer target for the results-JSON reader (bench_results_from_json). The input is
// parsed as JSON without exceptions; a document that parses is given to the reader,
// whose answer to a malformed one is results_error, and what it reads is written back
// out with to_json. Crashes and sanitizer reports are findings (and, with
// GLABENCH_FUZZ_STRICT=1, any other exception: see fuzz_strict.hpp).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>

#include "bench_results.hpp"
#include "fuzz_strict.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    const glabench::bench_results r = glabench::bench_results_from_json(j, "fuzz-input.json");
    (void)glabench::to_json(r).dump();
  } catch (const glabench::results_error&) {
    // the reader's answer to a malformed file
  } catch (const std::exception& e) {
    glabench::fuzz::unexpected_exception(e, "results_error");
  }
  return 0;
}
