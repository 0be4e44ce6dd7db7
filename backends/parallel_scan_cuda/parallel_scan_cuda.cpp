// The parallel-scan per-feature CUDA backend (seed 002): plugin-ABI glue around the
// shared per-feature scan kernels (backends/common/parallel_scan), instantiated for gla
// in launch.cu. gla only; fp64, fp32, bf16 and fp16; forward and backward; packed batches
// and fp32 states at 16-bit storage (ABI 1.5).
#include <cuda_runtime_api.h>

#include <iterator>
#include <string>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "scan_plugin.hpp"

namespace {

using namespace glabench::backend_support;
namespace scan = glabench::parallel_scan;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat16, GLABENCH_MODE_BACKWARD},
};

extern const glabench_backend kBackend;

using scan::storage_of;

glabench_status device_available(glabench_message* reason) {
  return scan::cuda_device_available(reason);
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "parallel_scan_cuda runs gla in fp64, fp32, bf16 and fp16");
  if (glabench_status s = scan::check_knobs("PARALLEL_SCAN_CUDA_", reason)) return s;
  return scan::check_sizes(p, reason);
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  *bytes =
      mode == GLABENCH_MODE_BACKWARD ? scan::backward_workspace_bytes(scan::recurrence::gla, p) : 0;
  return GLABENCH_OK;
}

using scan::finish;

#ifdef PARALLEL_SCAN_CUDA_DEMO_SLOWDOWN
// A deliberate regression, built only for the regression-gate demonstration (README,
// "The CI regression gate"): every call synchronises the stream and runs its kernels
// a second time.
constexpr int kLaunches = 2;
#else
constexpr int kLaunches = 1;
#endif

template <typename Launch>
glabench_status launch_all(Launch launch, scan::scan_args& a, const char* what,
                           glabench_message* error) {
  for (int i = 0; i < kLaunches; ++i) {
    if (i > 0)
      if (glabench_status s = finish(cudaStreamSynchronize(a.stream), "synchronise", error))
        return s;
    if (glabench_status s = finish(launch(a), what, error)) return s;
  }
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* f,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, f->workspace_bytes, error))
      return s;
    scan::scan_args a = scan::forward_args(p, f);
    return launch_all(
        [&](scan::scan_args& x) {
          return scan::launch_forward<scan::recurrence::gla>(storage_of(p->dtype), x);
        },
        a, "forward launch", error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    scan::scan_args a = scan::backward_args(p, bw);
    return launch_all(
        [&](scan::scan_args& x) {
          return scan::launch_backward<scan::recurrence::gla>(storage_of(p->dtype), x);
        },
        a, "backward launch", error);
  });
}

// The environment variables common/parallel_scan/knobs.hpp reads for gla (README,
// "Environment knobs"): results record them where set.
constexpr const char* kKnobs[] = {"PARALLEL_SCAN_CUDA_WIDTH", "PARALLEL_SCAN_CUDA_ROW_CHUNK",
                                  "PARALLEL_SCAN_CUDA_STRIP", "PARALLEL_SCAN_CUDA_FP32_STATE"};

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "parallel_scan_cuda",
    .version = "1.0.0",
    .device_type = kDLCUDA,
    .capabilities = kCapabilities,
    .num_capabilities = sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    .device_available = device_available,
    .supports = supports,
    .workspace_size = workspace_size,
    .forward = forward,
    .backward = backward,
    .knobs = kKnobs,
    .num_knobs = std::size(kKnobs),
    .features = scan::kFeatures,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
