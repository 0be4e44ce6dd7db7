// libFuzzer target for the results-JSON readers. The input is read by
// bench_results_from_text (read_bench_results' streaming pass over nlohmann's SAX
// parser) and, when nlohmann's parser accepts it and it nests no deeper than a results
// file may (kMaxJsonDepth), by bench_results_from_json (a parsed document, as a worker's
// reply is read): both must read the same results or refuse the input with the same
// results_error, and what they read is written back out with to_json. Deeper text must be
// refused by the streaming reader. A disagreement aborts. Crashes and sanitizer reports
// are findings too (and, with GLABENCH_FUZZ_STRICT=1, any exception other than the
// readers' own: see fuzz_strict.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_results.hpp"
#include "fuzz_strict.hpp"
#include "json_depth.hpp"

namespace {

using nlohmann::json;

[[noreturn]] void disagree(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "bench_results_fuzzer: %s disagree:\n  %.2000s\n  %.2000s\n", what,
               a.c_str(), b.c_str());
  std::abort();
}

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

template <typename Read>
std::string outcome(Read read) {
  try {
    return dump(glabench::to_json(read()));
  } catch (const glabench::results_error& e) {
    return std::string("results_error: ") + e.what();  // the readers' answer to a bad file
  } catch (const std::exception& e) {
    glabench::fuzz::unexpected_exception(e, "results_error");
    return std::string("exception: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string from_text =
      outcome([&] { return glabench::bench_results_from_text(text, "fuzz-input.json"); });
  if (!glabench::json_depth_within(text, glabench::kMaxJsonDepth)) {
    if (from_text.rfind("results_error: ", 0) != 0)
      disagree("the depth bound and bench_results_from_text", "refused", from_text);
    return 0;
  }
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  const std::string from_json =
      outcome([&] { return glabench::bench_results_from_json(j, "fuzz-input.json"); });
  if (from_json != from_text)
    disagree("bench_results_from_json and bench_results_from_text", from_json, from_text);
  return 0;
}
