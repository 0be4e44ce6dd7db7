/* A backend written in C, for the ABI's C side and its build description (ABI 1.1).
 * One source, compiled once per variant (C_PLUGIN_DESCRIBED):
 *   c_described    ends its table with GLABENCH_BUILD_INFO_INIT: the one line a C
 *                  backend writes to describe its build
 *   c_undescribed  leaves the build member out: C zero-fills it, "not described"
 * Both load; forward writes nothing (they are never verified). */
#include "glabench/backend.h"

static const glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, {kDLFloat, 64, 1}, GLABENCH_MODE_FORWARD}};

static glabench_status device_available(glabench_message* reason) {
  (void)reason;
  return GLABENCH_OK;
}
static glabench_status supports(const glabench_problem* p, glabench_mode mode,
                                glabench_message* reason) {
  (void)p, (void)mode, (void)reason;
  return GLABENCH_OK;
}
static glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                                      glabench_message* error) {
  (void)p, (void)mode, (void)error;
  *bytes = 0;
  return GLABENCH_OK;
}
static glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                               glabench_message* error) {
  (void)p, (void)a, (void)error;
  return GLABENCH_OK;
}

static const glabench_backend kTable = {
    GLABENCH_ABI_MAJOR,
    GLABENCH_ABI_MINOR,
    sizeof(glabench_backend),
#if C_PLUGIN_DESCRIBED
    "test_c_described",
    "0.0.0",
    kDLCPU,
    kCapabilities,
    1,
    device_available,
    supports,
    workspace_size,
    forward,
    NULL,
    GLABENCH_BUILD_INFO_INIT,
#else
    "test_c_undescribed",
    "0.0.0",
    kDLCPU,
    kCapabilities,
    1,
    device_available,
    supports,
    workspace_size,
    forward,
    NULL,
#endif
};

GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kTable;
}
