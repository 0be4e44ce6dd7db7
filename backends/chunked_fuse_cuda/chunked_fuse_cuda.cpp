// The chunked-fuse CUDA backend (seeds 000/001): gla forward and backward in 64-token
// chunks on tensor cores. Plugin-ABI glue around the kernels of launch.cu; the
// CHUNKED_FUSE_CUDA_STAGES knob picks the fused path (default) or the seed's five
// separate stage kernels.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <iterator>
#include <string>

#include "../common/cuda_plugin.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "launch.hpp"

namespace {

using namespace glabench::backend_support;
namespace chunked = glabench::chunked;
using glabench::cuda_plugin::finish;

constexpr glabench_capability kCapabilities[] = {
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat64, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kFloat32, GLABENCH_MODE_BACKWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_FORWARD},
    {GLABENCH_OP_GLA, kBFloat16, GLABENCH_MODE_BACKWARD},
};

constexpr int kMaxHead = 256;

extern const glabench_backend kBackend;

chunked::storage storage_of(DLDataType d) {
  return d.bits == 64          ? chunked::storage::fp64
         : d.code == kDLBfloat ? chunked::storage::bf16
                               : chunked::storage::fp32;
}

// CHUNKED_FUSE_CUDA_STAGES: `fused` (default) or `separate`; anything else is refused
// rather than silently running the default.
struct stages_knob {
  bool valid = true;
  chunked::stages path = chunked::stages::fused;
  std::string value;
};
const stages_knob& stages_choice() {
  static const stages_knob knob = [] {
    stages_knob k;
    if (const char* env = std::getenv("CHUNKED_FUSE_CUDA_STAGES")) {
      k.value = env;
      if (k.value == "separate")
        k.path = chunked::stages::separate;
      else if (k.value != "fused" && !k.value.empty())
        k.valid = false;
    }
    return k;
  }();
  return knob;
}

glabench_status device_available(glabench_message* reason) {
  return glabench::cuda_plugin::cuda_device_available(reason);
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "chunked_fuse_cuda runs gla in fp64, fp32 and bf16");
  if (!stages_choice().valid)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "CHUNKED_FUSE_CUDA_STAGES must be `fused` or `separate`, not `" +
                    stages_choice().value + "`");
  if (p->B < 1 || p->T < 1 || p->H < 1 || p->K < 1 || p->V < 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B, T, H, K and V must be at least 1");
  if (p->K > kMaxHead || p->V > kMaxHead)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "head sizes up to 256 (K=" + std::to_string(p->K) + ", V=" + std::to_string(p->V) + ")");
  if (p->B * p->H > 65535)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B·H above 65535 does not fit the grid");
  if ((p->T + 63) / 64 > 2147483647)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "too many chunks for the grid");
  return GLABENCH_OK;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  const int B = static_cast<int>(p->B), H = static_cast<int>(p->H), K = static_cast<int>(p->K),
            V = static_cast<int>(p->V);
  *bytes = mode == GLABENCH_MODE_BACKWARD
               ? chunked::backward_workspace_bytes(storage_of(p->dtype), B, p->T, H, K, V)
               : chunked::forward_workspace_bytes(storage_of(p->dtype), stages_choice().path, B,
                                                  p->T, H, K, V);
  return GLABENCH_OK;
}

chunked::call base_call(const glabench_problem* p, void* workspace, void* stream) {
  chunked::call c{};
  c.dtype = storage_of(p->dtype);
  c.path = stages_choice().path;
  c.B = static_cast<int>(p->B);
  c.H = static_cast<int>(p->H);
  c.K = static_cast<int>(p->K);
  c.V = static_cast<int>(p->V);
  c.T = p->T;
  c.scale = p->scale;
  c.workspace = workspace;
  c.stream = static_cast<cudaStream_t>(stream);
  return c;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* f,
                        glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_FORWARD, f->workspace_bytes, error))
      return s;
    chunked::call c = base_call(p, f->workspace, f->stream);
    c.q = data_of<void>(f->q);
    c.k = data_of<void>(f->k);
    c.v = data_of<void>(f->v);
    c.g = data_of<void>(f->g);
    c.h0 = data_of<void>(f->h0);
    c.o = data_of<void>(f->o);
    c.ht = data_of<void>(f->ht);
    return finish(chunked::launch_forward(c), "forward launch", error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    chunked::call c = base_call(p, bw->workspace, bw->stream);
    c.q = data_of<void>(bw->q);
    c.k = data_of<void>(bw->k);
    c.v = data_of<void>(bw->v);
    c.g = data_of<void>(bw->g);
    c.h0 = data_of<void>(bw->h0);
    c.d_o = data_of<void>(bw->d_o);
    c.dht = data_of<void>(bw->dht);
    c.dq = data_of<void>(bw->dq);
    c.dk = data_of<void>(bw->dk);
    c.dv = data_of<void>(bw->dv);
    c.dg = data_of<void>(bw->dg);
    c.dh0 = data_of<void>(bw->dh0);
    return finish(chunked::launch_backward(c), "backward launch", error);
  });
}

// The path knob (above; README): results record it where set.
constexpr const char* kKnobs[] = {"CHUNKED_FUSE_CUDA_STAGES"};

const glabench_backend kBackend = {
    .abi_major = GLABENCH_ABI_MAJOR,
    .abi_minor = GLABENCH_ABI_MINOR,
    .struct_size = sizeof(glabench_backend),
    .name = "chunked_fuse_cuda",
    .version = "0.1.0",
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
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
