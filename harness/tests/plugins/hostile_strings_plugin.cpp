// A backend whose strings are hostile, for the output-safety checks
// (cli_output_safety_test.sh): its version string and its commit hold control bytes (ESC,
// BEL, CR, a C1 CSI), and its forward fails with a message holding an ANSI colour sequence, a
// newline that would forge a line of output, and bytes that are not UTF-8. glabench must
// print all of it escaped and store it as valid JSON (harness/src/safe_text.hpp).
#include "accepting_stubs.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace {
using namespace glabench::backend_support;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD}};

// The bytes, spelled out so the test script can look for their escaped forms.
constexpr char kVersion[] =
    "6.6.6\x1b[2J\x07\r\xc2\x9b"
    "31m";
constexpr char kMessage[] = "hostile \x1b[31mRED\x1b[0m\nFORGED LINE: 0 failed\n\xff\xfe end";

using test_plugin::device_available, test_plugin::supports, test_plugin::workspace_size;
glabench_status forward(const glabench_problem*, const glabench_forward_args*,
                        glabench_message* error) {
  return fail(error, GLABENCH_ERROR_RUNTIME, kMessage);
}

const glabench_backend kTable = {GLABENCH_ABI_MAJOR,
                                 GLABENCH_ABI_MINOR,
                                 sizeof(glabench_backend),
                                 "test_hostile_strings",
                                 kVersion,
                                 kDLCPU,
                                 kCapabilities,
                                 1,
                                 device_available,
                                 supports,
                                 workspace_size,
                                 forward,
                                 nullptr};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kTable;
}

// Its commit (backend.h's GLABENCH_GIT_COMMIT_SYMBOL) holds control bytes and runs past the
// 64 bytes glabench reads of it.
extern "C" GLABENCH_EXPORT const char* glabench_backend_git_commit(void) {
  return "c0ffee\x1b[2J\nFORGED LINE\xff"
         "0123456789012345678901234567890123456789012345678901234567890123456789";
}
