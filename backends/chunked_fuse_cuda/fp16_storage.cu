// fp16 storage on the fp32 paths. Where fp32's pipelined 3×TF32 walk takes the call, it
// and (backward) the gradient kernel read and write fp16 themselves (launch_fp16_walk,
// launch_fp16_backward: each widens what it loads in shared memory); every other call has
// its tensors widened to fp32 in the workspace, the fp32 paths run on them (the WMMA
// kernels; the separate path as asked), and the outputs rounded back to fp16. States
// already in fp32 (ABI 1.5's STATE_FP32, which the plugin declares) are used as they are,
// others widened. Decoding (T = 1, the fused path) reads fp16 directly (the shared decode
// kernel). The bf16 walks are not used: their operands, scaled by 2^{±l} per sub-chunk,
// would leave fp16's range under strong gates.
#include <cuda_fp16.h>

#include <vector>

#include "../common/workspace_carver.hpp"
#include "launch.hpp"

namespace glabench::chunked {
namespace {

using cuda_plugin::carver;

struct conversion {
  const void* from;
  void* to;
  size_t n;
};

// The fp32 call and its conversions: fp32 copies carved from the head of c.workspace
// (sizing: every tensor counted, c.workspace null), the inner call's workspace after them.
// `all` false: the states alone, the tokens' tensors left in fp16 (an fp16 call with
// fp32 states).
struct widened_call {
  call inner;
  std::vector<conversion> widen, narrow;
  size_t bytes = 0;
};

widened_call widened(const call& c, bool backward, bool sizing, bool all = true) {
  widened_call x{c, {}, {}, 0};
  x.inner.dtype = all ? storage::fp32 : storage::fp16;
  x.inner.state_fp32 = !all;  // fp32 either way (fp32 storage: its own)
  carver w{static_cast<char*>(c.workspace)};
  const size_t tokens = static_cast<size_t>(c.B) * c.T * c.H;
  const size_t nk = tokens * c.K, nv = tokens * c.V,
               ns = static_cast<size_t>(c.B) * c.H * c.K * c.V;
  auto in = [&](const void* p, size_t n, bool state) -> const void* {
    if ((!p && !sizing) || (state && c.state_fp32) || (!state && !all)) return p;
    float* f = w.take<float>(n);
    if (!sizing) x.widen.push_back({p, f, n});
    return f;
  };
  auto out = [&](void* p, size_t n, bool state) -> void* {
    if ((!p && !sizing) || (state && c.state_fp32) || (!state && !all)) return p;
    float* f = w.take<float>(n);
    if (!sizing) x.narrow.push_back({f, p, n});
    return f;
  };
  call& i = x.inner;
  i.q = in(c.q, nk, false), i.k = in(c.k, nk, false), i.g = in(c.g, nk, false);
  i.v = in(c.v, nv, false), i.h0 = in(c.h0, ns, true);
  if (backward) {
    i.d_o = in(c.d_o, nv, false), i.dht = in(c.dht, ns, true);
    i.dq = out(c.dq, nk, false), i.dk = out(c.dk, nk, false), i.dg = out(c.dg, nk, false);
    i.dv = out(c.dv, nv, false), i.dh0 = out(c.dh0, ns, true);
  } else {
    i.o = out(c.o, nv, false), i.ht = out(c.ht, ns, true);
  }
  x.bytes = w.used;
  i.workspace = c.workspace ? static_cast<char*>(c.workspace) + w.used : nullptr;
  return x;
}

constexpr int kThreads = 256;

__global__ void widen_kernel(const __half* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __half2float(in[i]);
}
__global__ void narrow_kernel(const float* in, __half* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(in[i]);
}
unsigned blocks_for(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? b : 65535);
}

template <class Launch>
cudaError_t run_widened(const call& c, bool backward, bool all, Launch launch) {
  const widened_call x = widened(c, backward, false, all);
  for (const conversion& v : x.widen) {
    widen_kernel<<<blocks_for(v.n), kThreads, 0, c.stream>>>(static_cast<const __half*>(v.from),
                                                             static_cast<float*>(v.to), v.n);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  // The fp32 outputs start as NaN (all-ones bytes), so an element the fp32 path leaves
  // unwritten comes back NaN, as the harness's poisoned tensor would have shown it.
  for (const conversion& v : x.narrow)
    if (cudaError_t e =
            cudaMemsetAsync(const_cast<void*>(v.from), 0xff, v.n * sizeof(float), c.stream))
      return e;
  if (cudaError_t e = launch(x.inner)) return e;
  for (const conversion& v : x.narrow) {
    narrow_kernel<<<blocks_for(v.n), kThreads, 0, c.stream>>>(static_cast<const float*>(v.from),
                                                              static_cast<__half*>(v.to), v.n);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaSuccess;
}

}  // namespace

size_t fp16_widened_bytes(bool backward, int B, int64_t T, int H, int K, int V) {
  call c{};  // states not fp32: counted
  c.B = B, c.T = T, c.H = H, c.K = K, c.V = V;
  return widened(c, backward, true).bytes;
}

cudaError_t launch_forward_fp16(const call& c) {
  if (decodes(c)) return launch_decode(c);  // fp16 read directly
  if (fp16_walk_fits(c)) return run_widened(c, false, false, launch_fp16_walk);
  return run_widened(c, false, true, launch_forward);
}

cudaError_t launch_backward_fp16(const call& c) {
  if (fp16_backward_walks_fit(c)) return run_widened(c, true, false, launch_fp16_backward);
  return run_widened(c, true, true, launch_backward);
}

}  // namespace glabench::chunked
