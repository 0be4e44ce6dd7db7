// Measures forward-kernel tile shapes (strip length L, columns per thread CJ, chunk TC,
// block size) on one problem, so launch.cu's choice rests on numbers. Random inputs
// (gates log σ of normals), 5 warm-ups, median of 20 CUDA-event samples, L2 flushed.
// usage: build/hopper/parallel_scan_cuda_tile_sweep [B T H K V]   (default 4 2048 16 128 128, fp32)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../forward_kernel.cuh"

using namespace glabench::parallel_scan;

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

template <int NL, int L, int CJ, int TC, int THREADS>
void time_variant(const scan_args& a, void* flush, size_t flush_bytes) {
  using stage = column_stage<float, NL, L, CJ, TC, THREADS>;
  auto kernel = forward_kernel<float, NL, L, CJ, TC, THREADS>;
  const size_t smem = 2 * stage::kBufferValues * sizeof(float);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const dim3 grid(unsigned((a.V + stage::kColumns - 1) / stage::kColumns), unsigned(a.B * a.H));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int n = 0; n < 25; ++n) {
    CHECK(cudaMemsetAsync(flush, n, flush_bytes));
    CHECK(cudaEventRecord(start));
    kernel<<<grid, THREADS, smem>>>(a);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    if (n >= 5) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "L=%2d NL=%2d CJ=%d TC=%2d threads=%3d  regs=%3d local=%4zu B  blocks=%5u  median %.4f "
      "ms  min %.4f ms\n",
      L, NL, CJ, TC, THREADS, attr.numRegs, attr.localSizeBytes, grid.x * grid.y, ms[ms.size() / 2],
      ms[0]);
}

int main(int argc, char** argv) {
  scan_args a{};
  a.B = argc > 5 ? std::atoll(argv[1]) : 4;
  a.T = argc > 5 ? std::atoll(argv[2]) : 2048;
  a.H = argc > 5 ? std::atoll(argv[3]) : 16;
  a.K = argc > 5 ? std::atoll(argv[4]) : 128;
  a.V = argc > 5 ? std::atoll(argv[5]) : 128;
  a.scale = 1.0 / std::sqrt(double(a.K));
  const size_t n_qk = size_t(a.B * a.T * a.H * a.K), n_v = size_t(a.B * a.T * a.H * a.V);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  auto upload = [&](size_t n, bool gate) {
    std::vector<float> host(n);
    for (auto& x : host) {
      const float z = normal(rng);
      x = gate ? -std::log1p(std::exp(-(z + 2.0f))) : z * 0.3f;
    }
    void* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemcpy(d, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    return d;
  };
  a.q = upload(n_qk, false);
  a.k = upload(n_qk, false);
  a.g = upload(n_qk, true);
  a.v = upload(n_v, false);
  CHECK(cudaMalloc(&a.o, n_v * sizeof(float)));
  CHECK(cudaMalloc(&a.ht, size_t(a.B * a.H * a.K * a.V) * sizeof(float)));
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, 2 * size_t(l2)));
  std::printf("forward fp32 B=%lld T=%lld H=%lld K=%lld V=%lld\n", (long long)a.B, (long long)a.T,
              (long long)a.H, (long long)a.K, (long long)a.V);
  const size_t fb = 2 * size_t(l2);
  time_variant<8, 16, 2, 8, 128>(a, flush, fb);  // the forward launch.cu uses
  time_variant<8, 16, 1, 8, 128>(a, flush, fb);
  time_variant<8, 16, 2, 16, 128>(a, flush, fb);
  time_variant<8, 16, 4, 8, 128>(a, flush, fb);
  time_variant<8, 16, 1, 16, 128>(a, flush, fb);
  time_variant<16, 8, 4, 8, 128>(a, flush, fb);
  return 0;
}
