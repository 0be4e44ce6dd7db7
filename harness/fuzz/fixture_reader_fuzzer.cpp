// libFuzzer target for the HDF5 fixture reader (read_fixture). HDF5 reads files, so each
// input is written to a temporary file of this process ($TMPDIR or /tmp) and read from
// there, in this process (GLABENCH_FUZZ_CONTAINED=1: in a child first, as glabench reads).
// The reader's answer to a malformed file is fixture_error. Crashes, sanitizer reports and
// HDF5 objects left open afterwards are findings (and, with GLABENCH_FUZZ_STRICT=1, any
// other exception: see fuzz_strict.hpp); run_fuzzer.sh sets libhdf5's own crashes aside.
#include <hdf5.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "fixture.hpp"
#include "fuzz_strict.hpp"

namespace {

std::string g_path;
// GLABENCH_FUZZ_CONTAINED=1: read as glabench does, in a child first (run_fuzzer.sh uses it
// to tell libhdf5's crashes from the reader's); else in this process, which is faster.
bool g_contained = false;

void remove_temp_file() {
  if (!g_path.empty()) std::remove(g_path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // HDF5's own error stack is not wanted
  const char* contained = std::getenv("GLABENCH_FUZZ_CONTAINED");
  g_contained = contained && std::string(contained) == "1";
  const char* tmp = std::getenv("TMPDIR");
  g_path = std::string(tmp && *tmp ? tmp : "/tmp") + "/glabench_fixture_fuzz_" +
           std::to_string(getpid()) + ".h5";
  std::atexit(remove_temp_file);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) {
      std::fprintf(stderr, "fixture_reader_fuzzer: cannot write %s\n", g_path.c_str());
      std::abort();
    }
  }
  try {
    glabench::fixture_read_options options;
    options.in_child_first = g_contained;
    (void)glabench::read_fixture(g_path, options);
  } catch (const glabench::fixture_error& e) {
    // The reader's answer to a malformed file. Read in a child first (contained_run.hpp),
    // a child killed by a signal is libhdf5 crashing on the file, which the reader
    // refuses; one that exited with a code (a sanitizer's report, from the reader's own
    // code) or hung is a finding.
    const std::string rule = e.rule();
    if (rule.find("that process exited with code") != std::string::npos ||
        rule.find("that process did not end within") != std::string::npos) {
      std::fprintf(stderr, "fixture_reader_fuzzer: %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    glabench::fuzz::unexpected_exception(e, "fixture_error");
  }
  // read_fixture must close every HDF5 object it opened, whatever happened.
  if (const ssize_t open = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); open > 0) {
    std::fprintf(stderr, "fixture_reader_fuzzer: read_fixture left %zd HDF5 objects open\n", open);
    std::abort();
  }
  return 0;
}
