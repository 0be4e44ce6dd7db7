// Backends that compute gla in fp64 correctly (gla_fp64.hpp, as naive_recurrent) and
// then write one element outside a tensor, for the runner's guard checks. One source,
// compiled once per variant (OVERRUN_PLUGIN_VARIANT), each into its own module:
//   overrun        forward writes o, then one element past its end
//   underrun       forward writes o, then one element before its start
//   overrun_dq     backward writes dq, then one element past its end
//   overrun_input  forward writes one element past the end of its input q
//   inbounds       writes nothing outside its tensors (the control: verify passes)
// and, writing nothing outside its tensors either, for the ABI's appended members:
//   abi_1_0        its table ends where ABI 1.0's did (minor 0, no build member), as a
//                  plugin built against glabench 1.0 gives it
//   abi_1_1        its table ends where ABI 1.1's did (minor 1, build but no prepare,
//                  release or last_call_report), as a plugin built against glabench 1.1
//   abi_1_2        its table ends where ABI 1.2's did (minor 2, no collect)
//   abi_1_4        its table ends where ABI 1.4's did (minor 4, no features); past its
//                  end it holds every ABI 1.5 feature, so a harness that read them would
//                  offer it packed batches and fp32 states
//   unoptimised    built with -O0 by glabench_add_backend (harness/tests/CMakeLists.txt)
#include <cstdlib>
#include <cstring>

#include "gla_fp64.hpp"

namespace {

using namespace glabench::backend_support;

#define VARIANT_IS(name) (std::strcmp(OVERRUN_PLUGIN_VARIANT, #name) == 0)

extern const glabench_backend kBackend;

// A value no fp64 output of the fixtures holds, written where nothing may be.
constexpr double kStray = 12345.678;

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  return gla_fp64::supports(kBackend, p, mode, reason);
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  if (glabench_status s = gla_fp64::forward(kBackend, p, a, error)) return s;
  if (VARIANT_IS(overrun)) data_of<double>(a->o)[gla_fp64::numel(a->o)] = kStray;
  if (VARIANT_IS(underrun)) data_of<double>(a->o)[-1] = kStray;
  if (VARIANT_IS(overrun_input)) data_of<double>(a->q)[gla_fp64::numel(a->q)] = kStray;
  return GLABENCH_OK;
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  if (glabench_status s = gla_fp64::backward(kBackend, p, a, error)) return s;
  if (VARIANT_IS(overrun_dq)) data_of<double>(a->dq)[gla_fp64::numel(a->dq)] = kStray;
  return GLABENCH_OK;
}

// abi_1_0's table ends where ABI 1.0's did; abi_1_1's where 1.1's did; abi_1_2's where
// 1.2's did; abi_1_4's where 1.4's did.
constexpr bool kAbi10 = __builtin_strcmp(OVERRUN_PLUGIN_VARIANT, "abi_1_0") == 0;
constexpr bool kAbi11 = __builtin_strcmp(OVERRUN_PLUGIN_VARIANT, "abi_1_1") == 0;
constexpr bool kAbi12 = __builtin_strcmp(OVERRUN_PLUGIN_VARIANT, "abi_1_2") == 0;
constexpr bool kAbi14 = __builtin_strcmp(OVERRUN_PLUGIN_VARIANT, "abi_1_4") == 0;

// What abi_1_1 holds past its struct_size, where a 1.1 plugin's memory holds whatever
// follows its table: tripwires for a harness that reads members its struct_size lacks.
glabench_status past_the_end_prepare(const glabench_problem*, glabench_mode,
                                     const glabench_forward_args*, const glabench_backward_args*,
                                     glabench_message* error) {
  return fail(error, GLABENCH_ERROR_RUNTIME, "the harness read prepare past a 1.1 table's end");
}
void past_the_end_release() {
  std::abort();  // (a worker's crash, reported as such)
}
glabench_status past_the_end_report(glabench_message* json) {
  write_message(json, R"({"read_past_the_end": true})");
  return GLABENCH_OK;
}
// Past abi_1_2's end: a collect that fails the case.
glabench_status past_the_end_collect(glabench_message* error) {
  return fail(error, GLABENCH_ERROR_RUNTIME, "the harness read collect past a 1.2 table's end");
}

const glabench_backend kBackend = {
    GLABENCH_ABI_MAJOR,
    kAbi10   ? 0u
    : kAbi11 ? 1u
    : kAbi12 ? 2u
    : kAbi14 ? 4u
             : GLABENCH_ABI_MINOR,
    kAbi10   ? offsetof(glabench_backend, build)
    : kAbi11 ? offsetof(glabench_backend, prepare)
    : kAbi12 ? offsetof(glabench_backend, collect)
    : kAbi14 ? offsetof(glabench_backend, features)
             : sizeof(glabench_backend),
    "test_" OVERRUN_PLUGIN_VARIANT,
    "0.0.0",
    kDLCPU,
    gla_fp64::kCapabilities,
    gla_fp64::kNumCapabilities,
    gla_fp64::device_available,
    supports,
    gla_fp64::workspace_size,
    forward,
    backward,
    GLABENCH_BUILD_INFO_INIT,
    kAbi11 ? past_the_end_prepare : nullptr,
    kAbi11 ? past_the_end_release : nullptr,
    kAbi11 ? past_the_end_report : nullptr,
    kAbi12 ? past_the_end_collect : nullptr,
    nullptr,
    0,
    kAbi14 ? GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32 : 0u};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
