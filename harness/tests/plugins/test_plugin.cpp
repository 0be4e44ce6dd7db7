// Deliberately broken or minimal backends for the loader and runner tests. One source,
// compiled once per variant (TEST_PLUGIN_VARIANT), each into its own module:
//   no_entry       exports no entry symbol
//   null_entry     entry returns NULL
//   abi_major      declares ABI major 99
//   short_table    struct_size shorter than ABI 1.0 promises
//   short_1_1      declares ABI 1.1 but ends where 1.0 did (no build member)
//   short_1_2      declares ABI 1.2 but ends where 1.1 did (no prepare, release,
//                  last_call_report)
//   null_forward   leaves forward NULL
//   duplicate      a valid table named "naive_recurrent"
//   silent         valid; forward returns OK and writes nothing
//   failing        valid; forward returns a runtime error with a message
//   unavailable    valid, but its device_available() says it cannot run here
//   unterminated   valid; forward fills the whole error buffer with letters, no NUL, and
//                  returns a runtime error
//   unknown_op     a capability with op 7, which ABI 1 does not have
//   unknown_mode   a capability with mode 5
//   aws            valid, named "aws", with one knob, AWS_TEST_TILE: results record it,
//                  and no other AWS_ variable (AWS_SECRET_ACCESS_KEY)
//   foreign_knob   names HF_TOKEN, a variable not named after it, as a knob
#include "accepting_stubs.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace {
using namespace glabench::backend_support;

#define VARIANT_IS(name) (__builtin_strcmp(TEST_PLUGIN_VARIANT, #name) == 0)

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD}};
constexpr glabench_capability kUnknownOp[] = {{GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
                                              {glabench_op(7), kFloat64, GLABENCH_MODE_FORWARD}};
constexpr glabench_capability kUnknownMode[] = {{GLABENCH_OP_GLA, kFloat64, glabench_mode(5)}};
constexpr const char* kAwsKnobs[] = {"AWS_TEST_TILE"};
constexpr const char* kForeignKnobs[] = {"TEST_FOREIGN_KNOB_TILE", "HF_TOKEN"};

using test_plugin::supports, test_plugin::workspace_size;
glabench_status device_available(glabench_message* reason) {
  if (VARIANT_IS(unavailable))
    return fail(reason, GLABENCH_ERROR_NO_DEVICE, "no frobnicator on this machine");
  return GLABENCH_OK;
}
glabench_status forward(const glabench_problem*, const glabench_forward_args*,
                        glabench_message* error) {
  if (VARIANT_IS(failing))
    return fail(error, GLABENCH_ERROR_RUNTIME, "deliberate failure from the test plugin");
  if (VARIANT_IS(unterminated)) {
    for (size_t i = 0; i < error->capacity; ++i) error->text[i] = char('a' + i % 26);
    return GLABENCH_ERROR_RUNTIME;
  }
  return GLABENCH_OK;  // writes nothing
}

glabench_backend make_table() {
  glabench_backend t = {GLABENCH_ABI_MAJOR,
                        GLABENCH_ABI_MINOR,
                        sizeof(glabench_backend),
                        "test_" TEST_PLUGIN_VARIANT,
                        "0.0.0",
                        kDLCPU,
                        kCapabilities,
                        1,
                        device_available,
                        supports,
                        workspace_size,
                        forward,
                        nullptr};
  if (VARIANT_IS(abi_major)) t.abi_major = 99;
  if (VARIANT_IS(short_table)) t.struct_size = offsetof(glabench_backend, capabilities);
  if (VARIANT_IS(short_1_1)) {
    t.abi_minor = 1;
    t.struct_size = offsetof(glabench_backend, build);
  }
  if (VARIANT_IS(short_1_2)) {
    t.abi_minor = 2;
    t.struct_size = offsetof(glabench_backend, prepare);
  }
  if (VARIANT_IS(null_forward)) t.forward = nullptr;
  if (VARIANT_IS(duplicate)) t.name = "naive_recurrent";
  if (VARIANT_IS(unknown_op)) t.capabilities = kUnknownOp, t.num_capabilities = 2;
  if (VARIANT_IS(unknown_mode)) t.capabilities = kUnknownMode;
  if (VARIANT_IS(aws)) t.name = "aws", t.knobs = kAwsKnobs, t.num_knobs = 1;
  if (VARIANT_IS(foreign_knob)) t.knobs = kForeignKnobs, t.num_knobs = 2;
  return t;
}

const glabench_backend kTable = make_table();

}  // namespace

#ifndef TEST_PLUGIN_NO_ENTRY
extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return VARIANT_IS(null_entry) ? nullptr : &kTable;
}
#endif
