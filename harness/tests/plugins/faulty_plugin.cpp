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
//   load_hang    (no forward fault) its entry symbol never returns
//   ctor_hang    (no forward fault) a constructor of the library never returns: dlopen
//                does not
//   available_hang  (no forward fault) device_available() never returns
//   reload_fails forward writes through a null pointer; its entry returns NULL when the
//                file $FAULTY_PLUGIN_MARKER exists and creates it otherwise, so it loads
//                in the first worker only (as a plugin whose loading fails now and then)
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "accepting_stubs.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace {
using namespace glabench::backend_support;

#define FAULT_IS(name) (__builtin_strcmp(FAULTY_PLUGIN_FAULT, #name) == 0)

volatile int* volatile nowhere = nullptr;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD}};

using test_plugin::supports, test_plugin::workspace_size;

void hang() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

glabench_status device_available(glabench_message* m) {
  if (FAULT_IS(available_hang)) hang();
  return test_plugin::device_available(m);
}

// The library's constructor (ctor_hang): dlopen runs it.
struct at_load {
  at_load() {
    if (FAULT_IS(ctor_hang)) hang();
  }
} hang_at_load;

void throw_through() {
  throw std::runtime_error("thrown through the C boundary");
}

glabench_status forward(const glabench_problem*, const glabench_forward_args*,
                        glabench_message* error) {
  if (FAULT_IS(segfault) || FAULT_IS(reload_fails)) *nowhere = 1;
  if (FAULT_IS(abort)) std::abort();
  if (FAULT_IS(exit)) std::exit(3);
  if (FAULT_IS(throw)) throw_through();
  if (FAULT_IS(hang)) hang();
  if (FAULT_IS(refuse)) return fail(error, GLABENCH_ERROR_UNSUPPORTED, "refused at call time");
  if (FAULT_IS(no_device)) return fail(error, GLABENCH_ERROR_NO_DEVICE, "no device at call time");
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
  if (FAULT_IS(load_hang)) hang();
  if (FAULT_IS(reload_fails)) {
    const char* marker = std::getenv("FAULTY_PLUGIN_MARKER");
    if (!marker) return nullptr;
    const int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return nullptr;  // loaded once already
    close(fd);
  }
  return &kTable;
}
