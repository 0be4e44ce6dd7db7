// The fused recurrent RWKV6 CUDA backend (seed 004): plugin-ABI glue. rwkv6 only; fp64,
// fp32, bf16 and fp16; forward and backward. Two modes (FUSED_RECURRENT_RWKV6_CUDA_MODE):
//   fast (default): the shared per-feature scan kernels (backends/common/parallel_scan)
//                   instantiated for rwkv6 in launch_fast.cu;
//   seed:           seed 004's tiled forward (seed_forward.cuh); the backward is fast's.
// Fast mode takes packed batches and fp32 states at 16-bit storage (ABI 1.5).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "scan_plugin.hpp"
#include "seed_mode.hpp"

namespace {

using namespace glabench::backend_support;
namespace scan = glabench::parallel_scan;
namespace rwkv6 = glabench::fused_recurrent_rwkv6;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kBFloat16, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_RWKV6, kFloat16, GLABENCH_MODE_BACKWARD},
};

extern const glabench_backend kBackend;

enum class mode { fast, seed, unknown };

// FUSED_RECURRENT_RWKV6_CUDA_MODE: unset or "fast", "seed"; anything else is refused by
// supports() with its value.
mode run_mode() {
  static const mode m = [] {
    const char* env = std::getenv("FUSED_RECURRENT_RWKV6_CUDA_MODE");
    if (!env || !*env || std::strcmp(env, "fast") == 0) return mode::fast;
    return std::strcmp(env, "seed") == 0 ? mode::seed : mode::unknown;
  }();
  return m;
}

glabench_status device_available(glabench_message* reason) {
  return scan::cuda_device_available(reason);
}

glabench_status supports(const glabench_problem* p, glabench_mode m, glabench_message* reason) {
  if (run_mode() == mode::unknown)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                std::string("FUSED_RECURRENT_RWKV6_CUDA_MODE=") +
                    std::getenv("FUSED_RECURRENT_RWKV6_CUDA_MODE") + ": expected fast or seed");
  if (!has_capability(kBackend, p->op, p->dtype, m))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "fused_recurrent_rwkv6_cuda runs rwkv6 in fp64, fp32, bf16 and fp16");
  if (glabench_status s = scan::check_knobs("FUSED_RECURRENT_RWKV6_CUDA_", reason)) return s;
  if (run_mode() == mode::seed && m == GLABENCH_MODE_FORWARD &&
      (packed_sequences(p) > 0 || states_in_fp32(p)))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "seed mode's forward takes neither packed batches nor fp32 states");
  return scan::check_sizes(p, reason);
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode m, size_t* bytes,
                               glabench_message*) {
  const scan::storage s = scan::storage_of(p->dtype);
  if (m == GLABENCH_MODE_BACKWARD)
    *bytes = scan::backward_workspace_bytes(scan::recurrence::rwkv6, p);
  else
    *bytes = run_mode() == mode::seed
                 ? rwkv6::seed_forward_workspace_bytes(s, p->B, p->T, p->H, p->K, p->V)
                 : 0;
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* f,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, f->workspace_bytes, error))
      return s;
    const scan::scan_args a = scan::forward_args(p, f);
    const scan::storage s = scan::storage_of(p->dtype);
    return scan::finish(run_mode() == mode::seed
                            ? rwkv6::launch_seed_forward(s, a)
                            : scan::launch_forward<scan::recurrence::rwkv6>(s, a),
                        "forward launch", error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    const scan::scan_args a = scan::backward_args(p, bw);
    return scan::finish(
        scan::launch_backward<scan::recurrence::rwkv6>(scan::storage_of(p->dtype), a),
        "backward launch", error);
  });
}

// The mode (above) and the variables common/parallel_scan/knobs.hpp reads for rwkv6
// (README, "Environment knobs"): results record them where set.
constexpr const char* kKnobs[] = {
    "FUSED_RECURRENT_RWKV6_CUDA_MODE", "FUSED_RECURRENT_RWKV6_CUDA_WIDTH",
    "FUSED_RECURRENT_RWKV6_CUDA_ROW_CHUNK", "FUSED_RECURRENT_RWKV6_CUDA_STRIP",
    "FUSED_RECURRENT_RWKV6_CUDA_FP32_STATE"};

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "fused_recurrent_rwkv6_cuda",
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
