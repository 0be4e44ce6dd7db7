// Backends that fail the way code under development does, for the isolation tests. One
// source, compiled once per fault (FAULTY_PLUGIN_FAULT), each into its own module
// glabench_backend_faulty_<fault>; each claims gla fp64 forward on the host, accepts
// every problem, and then, in forward:
//   segfault     writes through a null pointer
//   abort        calls abort()
//   exit         calls exit(3)
//   throw        lets a C++ exception escape through the C boundary
//   hang         never returns
//   refuse       returns UNSUPPORTED, though supports() said yes
//   no_device    returns NO_DEVICE, though device_available() said yes
//   load_crash   (no forward fault) its entry symbol writes through a null pointer
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

#include "accepting_stubs.hpp"

namespace {
using namespace glabench::backend_support;

#define FAULT_IS(name) (__builtin_strcmp(FAULTY_PLUGIN_FAULT, #name) == 0)

volatile int* volatile nowhere = nullptr;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD}};

using test_plugin::device_available, test_plugin::supports, test_plugin::workspace_size;

void throw_through() {
  throw std::runtime_error("thrown through the C boundary");
}

glabench_status forward(const glabench_problem*, const glabench_forward_args*,
                        glabench_message* error) {
  if (FAULT_IS(segfault)) *nowhere = 1;
  if (FAULT_IS(abort)) std::abort();
  if (FAULT_IS(exit)) std::exit(3);
  if (FAULT_IS(throw)) throw_through();
  if (FAULT_IS(hang))
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (FAULT_IS(refuse))
    return fail(error, GLABENCH_ERROR_UNSUPPORTED, "refused at call time");
  if (FAULT_IS(no_device))
    return fail(error, GLABENCH_ERROR_NO_DEVICE, "no device at call time");
  return fail(error, GLABENCH_ERROR_RUNTIME, "no output written");
}

const glabench_backend kTable = {GLABENCH_ABI_MAJOR,
                                 GLABENCH_ABI_MINOR,
                                 sizeof(glabench_backend),
                                 "faulty_" FAULTY_PLUGIN_FAULT,
                                 "0.0.0",
                                 kDLCPU,
                                 kCapabilities,
                                 1,
                                 device_available,
                                 supports,
                                 workspace_size,
                                 forward,
                                 nullptr};

}  // namespace

// The C boundary is `noexcept` in spirit: an exception escaping forward() terminates
// the process, which is the fault the `throw` variant stands for.
extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  if (FAULT_IS(load_crash)) *nowhere = 1;
  return &kTable;
}
