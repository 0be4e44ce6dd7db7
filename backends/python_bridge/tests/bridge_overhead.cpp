// python_bridge_overhead: the bridge's own cost per forward call, measured around a kernel
// that does nothing (torch_kernels.py's `empty`, or `empty_cuda` on the GPU), as the
// harness calls it: glabench's DLTensors in, the harness's stream, outputs written in place.
//
// usage: python_bridge_overhead BRIDGE NAME=SPEC cpu|cuda [CALLS]
// Prints one JSON object: the median over 7 batches of the host time per call, in µs.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "glabench/backend.h"

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "python_bridge_overhead: %s\n", why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fail("usage: python_bridge_overhead BRIDGE NAME=SPEC cpu|cuda [CALLS]");
  const std::string device = argv[3];
  const int calls = argc > 4 ? std::atoi(argv[4]) : 20000;
  if (calls <= 0) return fail("CALLS must be a positive number");
  setenv("GLABENCH_PYTHON_BACKEND", argv[2], 1);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail(dlerror());
  auto entry = reinterpret_cast<glabench_backend_entry_fn>(dlsym(lib, GLABENCH_ENTRY_SYMBOL));
  auto error = reinterpret_cast<const char* (*)()>(dlsym(lib, "glabench_python_bridge_error"));
  const glabench_backend* t = entry ? entry() : nullptr;
  if (!t) return fail(error ? error() : "no table");

  const bool cuda = device == "cuda";
  const int64_t B = 1, T = 16, H = 2, K = 64, V = 64;
  const DLDataType f32{kDLFloat, 32, 1};
  void* stream = nullptr;
  auto allocate = [&](size_t bytes) -> void* {
#if GLABENCH_WITH_CUDA
    if (cuda) {
      void* p = nullptr;
      if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
      return p;
    }
#endif
    return std::calloc(1, bytes);
  };
#if GLABENCH_WITH_CUDA
  if (cuda && cudaStreamCreate(reinterpret_cast<cudaStream_t*>(&stream)) != cudaSuccess)
    return fail("cudaStreamCreate failed");
#else
  if (cuda) return fail("built without CUDA");
#endif
  int64_t tok_k[] = {B, T, H, K}, tok_v[] = {B, T, H, V}, state[] = {B, H, K, V};
  const DLDevice dev{cuda ? kDLCUDA : kDLCPU, 0};
  std::vector<DLTensor> tensors;
  auto make = [&](int64_t* shape) {
    size_t n = 1;
    for (int i = 0; i < 4; ++i) n *= size_t(shape[i]);
    return DLTensor{allocate(n * 4), dev, 4, f32, shape, nullptr, 0};
  };
  DLTensor q = make(tok_k), k = make(tok_k), v = make(tok_v), g = make(tok_k), h0 = make(state),
           o = make(tok_v), ht = make(state);
  for (const DLTensor* x : {&q, &k, &v, &g, &h0, &o, &ht})
    if (!x->data) return fail("allocation failed");
  const int32_t device_ids[] = {0};
  glabench_problem p{};
  p.struct_size = sizeof p;
  p.op = GLABENCH_OP_GLA;
  p.B = B, p.T = T, p.H = H, p.K = K, p.V = V;
  p.scale = 0.125;
  p.dtype = f32;
  p.has_h0 = 1;
  p.num_devices = 1;
  p.device_ids = device_ids;
  glabench_forward_args a{};
  a.struct_size = sizeof a;
  a.q = &q, a.k = &k, a.v = &v, a.g = &g, a.h0 = &h0, a.o = &o, a.ht = &ht;
  a.stream = stream;
  char text[1024] = {};
  glabench_message msg{text, sizeof text};
  if (t->prepare && t->prepare(&p, GLABENCH_MODE_FORWARD, &a, nullptr, &msg) != GLABENCH_OK)
    return fail(std::string("prepare: ") + text);
  std::vector<double> batches;
  for (int batch = 0; batch < 8; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      if (t->forward(&p, &a, &msg) != GLABENCH_OK) return fail(std::string("forward: ") + text);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (batch > 0) batches.push_back(us / calls);  // the first batch warms up
  }
  std::sort(batches.begin(), batches.end());
  std::printf(
      "{\"device\": \"%s\", \"calls_per_batch\": %d, \"us_per_call_median\": %.3f, "
      "\"us_per_call_min\": %.3f, \"us_per_call_max\": %.3f}\n",
      device.c_str(), calls, batches[batches.size() / 2], batches.front(), batches.back());
  return 0;
}
