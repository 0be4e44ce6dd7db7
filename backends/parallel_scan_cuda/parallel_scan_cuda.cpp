// The parallel-scan per-feature CUDA backend (seed 002): plugin-ABI glue around the
// kernels in launch.cu. gla only; fp64, fp32 and bf16; forward and backward.
#include <cuda_runtime_api.h>

#include <string>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "scan_args.hpp"

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
};

extern const glabench_backend kBackend;

scan::storage storage_of(DLDataType d) {
  return d.bits == 64          ? scan::storage::fp64
         : d.code == kDLBfloat ? scan::storage::bf16
                               : scan::storage::fp32;
}

glabench_status device_available(glabench_message* reason) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return fail(reason, GLABENCH_ERROR_NO_DEVICE,
                e != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(e)
                                 : "no CUDA device");
  }
  return GLABENCH_OK;
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  if (!has_capability(kBackend, p->op, p->dtype, mode))
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "parallel_scan_cuda runs gla in fp64, fp32 and bf16");
  if (p->B < 1 || p->T < 1 || p->H < 1 || p->K < 1 || p->V < 1)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED, "B, T, H, K and V must be at least 1");
  if (p->K > scan::kMaxHeadSize || p->V > scan::kMaxHeadSize)
    return fail(
        reason, GLABENCH_ERROR_UNSUPPORTED,
        "head sizes up to 256 (K=" + std::to_string(p->K) + ", V=" + std::to_string(p->V) + ")");
  if (p->B * p->H > 65535)
    return fail(reason, GLABENCH_ERROR_UNSUPPORTED,
                "B·H above 65535 does not fit the grid's y dimension");
  return GLABENCH_OK;
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message*) {
  *bytes = mode == GLABENCH_MODE_BACKWARD
               ? scan::backward_workspace_bytes(storage_of(p->dtype), p->B, p->T, p->H, p->K)
               : 0;
  return GLABENCH_OK;
}

glabench_status finish(cudaError_t e, const char* what, glabench_message* error) {
  if (e == cudaSuccess) return GLABENCH_OK;
  return fail(error, GLABENCH_ERROR_RUNTIME,
              std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

scan::scan_args base_args(const glabench_problem* p, void* workspace, void* stream) {
  scan::scan_args a{};
  a.B = p->B;
  a.T = p->T;
  a.H = p->H;
  a.K = p->K;
  a.V = p->V;
  a.scale = p->scale;
  a.workspace = workspace;
  a.stream = static_cast<cudaStream_t>(stream);
  return a;
}

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
    scan::scan_args a = base_args(p, f->workspace, f->stream);
    a.q = data_of<void>(f->q);
    a.k = data_of<void>(f->k);
    a.v = data_of<void>(f->v);
    a.g = data_of<void>(f->g);
    a.h0 = data_of<void>(f->h0);
    a.o = data_of<void>(f->o);
    a.ht = data_of<void>(f->ht);
    return launch_all(
        [&](scan::scan_args& x) { return scan::launch_forward(storage_of(p->dtype), x); }, a,
        "forward launch", error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* bw,
                         glabench_message* error) {
  return guarded(error, [&] {
    if (glabench_status s =
            check_call(kBackend, p, GLABENCH_MODE_BACKWARD, bw->workspace_bytes, error))
      return s;
    scan::scan_args a = base_args(p, bw->workspace, bw->stream);
    a.q = data_of<void>(bw->q);
    a.k = data_of<void>(bw->k);
    a.v = data_of<void>(bw->v);
    a.g = data_of<void>(bw->g);
    a.h0 = data_of<void>(bw->h0);
    a.d_o = data_of<void>(bw->d_o);
    a.dht = data_of<void>(bw->dht);
    a.dq = data_of<void>(bw->dq);
    a.dk = data_of<void>(bw->dk);
    a.dv = data_of<void>(bw->dv);
    a.dg = data_of<void>(bw->dg);
    a.dh0 = data_of<void>(bw->dh0);
    return launch_all(
        [&](scan::scan_args& x) { return scan::launch_backward(storage_of(p->dtype), x); }, a,
        "backward launch", error);
  });
}

const glabench_backend kBackend = {
    GLABENCH_ABI_MAJOR,
    GLABENCH_ABI_MINOR,
    sizeof(glabench_backend),
    "parallel_scan_cuda",
    "1.0.0",
    kDLCUDA,
    kCapabilities,
    sizeof(kCapabilities) / sizeof(kCapabilities[0]),
    device_available,
    supports,
    workspace_size,
    forward,
    backward,
};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
