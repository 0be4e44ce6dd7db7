// Measures forward-, dv- and row-kernel tile shapes (strip length L, columns per thread CJ,
// chunk TC, block size) on one problem in fp32 and bf16, so launch.cu's choice rests on numbers: the
// median of 20 CUDA-event samples after 5 warm-ups, L2 flushed, and o's (dv's) rel_l2
// against the fp64 kernels on the same rounded inputs (random inputs, gates log σ of
// normals, h0 and dht present).
// usage: build/hopper/parallel_scan_cuda_tile_sweep [B T H K V [SAMPLES [fp64]]]
//        (default 4 2048 16 128 128 20; SAMPLES=1 launches every kernel once, no warm-up,
//        for a profiler; fp64: only the fp64 forward and dv kernels; fp32_state64: the fp32
//        forward with an fp64 state)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../backward_dq_dk_dg_kernel.cuh"
#include "../backward_dv_kernel.cuh"
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

namespace {

struct problem {
  int64_t B, T, H, K, V;
  size_t n_k() const { return size_t(B * T * H * K); }
  size_t n_v() const { return size_t(B * T * H * V); }
  size_t n_s() const { return size_t(B * H * K * V); }
};

// Host inputs in fp32: q, k, v, do ~ N(0, 0.3²), g = log σ(N(2, 1)), h0, dht ~ N(0, 0.3²).
struct host_inputs {
  std::vector<float> q, k, v, g, d_o, h0, dht;
};

template <typename T>
std::vector<T> convert(const std::vector<float>& x) {
  std::vector<T> y(x.size());
  for (size_t n = 0; n < x.size(); ++n) y[n] = T(x[n]);
  return y;
}
std::vector<float> round_bf16(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t n = 0; n < x.size(); ++n) y[n] = __bfloat162float(__float2bfloat16_rn(x[n]));
  return y;
}

template <typename T>
void* upload(const std::vector<T>& x) {
  void* d = nullptr;
  CHECK(cudaMalloc(&d, x.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Device arguments with storage type T from host fp32 values (already rounded).
template <typename T>
scan_args device_args(const problem& p, const host_inputs& in) {
  scan_args a{};
  a.B = p.B, a.T = p.T, a.H = p.H, a.K = p.K, a.V = p.V;
  a.scale = 1.0 / std::sqrt(double(p.K));
  a.q = upload(convert<T>(in.q)), a.k = upload(convert<T>(in.k)), a.v = upload(convert<T>(in.v));
  a.g = upload(convert<T>(in.g)), a.d_o = upload(convert<T>(in.d_o));
  a.h0 = upload(convert<T>(in.h0)), a.dht = upload(convert<T>(in.dht));
  CHECK(cudaMalloc(&a.o, p.n_v() * sizeof(T)));
  CHECK(cudaMalloc(&a.dv, p.n_v() * sizeof(T)));
  CHECK(cudaMalloc(&a.ht, p.n_s() * sizeof(T)));
  CHECK(cudaMalloc(&a.dh0, p.n_s() * sizeof(T)));
  CHECK(cudaMalloc(&a.dq, p.n_k() * sizeof(T)));
  CHECK(cudaMalloc(&a.dk, p.n_k() * sizeof(T)));
  CHECK(cudaMalloc(&a.dg, p.n_k() * sizeof(T)));
  CHECK(cudaMalloc(&a.workspace, size_t(p.B * p.T * p.H * (p.K + 1)) * sizeof(compute_t<T>)));
  return a;
}

template <typename T>
std::vector<double> download(const void* d, size_t n) {
  std::vector<T> x(n);
  CHECK(cudaMemcpy(x.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = double(x[i]);
  return y;
}
template <>
std::vector<double> download<__nv_bfloat16>(const void* d, size_t n) {
  std::vector<__nv_bfloat16> x(n);
  CHECK(cudaMemcpy(x.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = double(__bfloat162float(x[i]));
  return y;
}

double rel_l2(const std::vector<double>& x, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

struct flusher {
  void* buffer = nullptr;
  size_t bytes = 0;
  flusher() {
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    bytes = 2 * size_t(l2);
    CHECK(cudaMalloc(&buffer, bytes));
  }
};

int samples = 20, warmups = 5;

// Median of `samples` CUDA-event samples of launch() after `warmups`, L2 flushed before each.
template <typename Launch>
float median_ms(Launch&& launch, const flusher& f) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int n = 0; n < warmups + samples; ++n) {
    CHECK(cudaMemsetAsync(f.buffer, n, f.bytes));
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    if (n >= warmups) ms.push_back(t);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// A column-layout kernel (forward or dv) over the whole problem, as launch.cu sizes it.
template <typename Elem, int NL, int L, int CJ, int TC, int THREADS, typename C = compute_t<Elem>,
          typename Kernel>
dim3 launch_columns(Kernel kernel, const problem& p, const scan_args& a) {
  using stage = chunk_stage<Elem, NL, L, CJ, TC, THREADS, C>;
  const dim3 grid(unsigned((p.V + stage::kColumns - 1) / stage::kColumns), unsigned(p.B * p.H));
  const size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<grid, THREADS, smem>>>(a);
  CHECK(cudaGetLastError());
  return grid;
}

struct references {
  std::vector<double> o, dv, dq, dk, dg;
};

// v·do, then the row kernel (dq, dk, dg); `parts` picks either (bits 1, 2).
template <typename Elem, int NL, int L, int RJ, int TC, int THREADS>
void launch_rows(const problem& p, const scan_args& a, int parts = 3) {
  using stage = row_stage<Elem, NL, L, RJ, TC, THREADS>;
  const dim3 grid(unsigned((p.K + stage::kRows - 1) / stage::kRows), unsigned(p.B * p.H));
  const size_t smem = (2 * stage::kBufferValues + stage::kScratchValues) * sizeof(typename stage::C);
  auto kernel = backward_dq_dk_dg_kernel<Elem, NL, L, RJ, TC, THREADS>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  if (parts & 1) token_dot_kernel<Elem><<<unsigned((p.B * p.T * p.H + 7) / 8), 256>>>(a);
  CHECK(cudaGetLastError());
  if (parts & 2) kernel<<<grid, THREADS, smem>>>(a);
  CHECK(cudaGetLastError());
}

template <typename Elem, int NL, int L, int RJ, int TC, int THREADS>
void run_rows(const char* dtype, const problem& p, const scan_args& a, const references& ref,
              const flusher& f) {
  const float dot_ms = median_ms([&] { launch_rows<Elem, NL, L, RJ, TC, THREADS>(p, a, 1); }, f);
  const float ms = median_ms([&] { launch_rows<Elem, NL, L, RJ, TC, THREADS>(p, a); }, f);
  cudaFuncAttributes ra{};
  CHECK(cudaFuncGetAttributes(&ra, backward_dq_dk_dg_kernel<Elem, NL, L, RJ, TC, THREADS>));
  std::printf("%-5s rows L=%d RJ=%d TC=%2d threads=%3d regs %3d local %zu | v·do + dq/dk/dg %.4f ms "
              "(v·do alone %.4f)  rel_l2 dq %.3g dk %.3g dg %.3g\n",
              dtype, L, RJ, TC, THREADS, ra.numRegs, ra.localSizeBytes, ms, dot_ms,
              rel_l2(download<Elem>(a.dq, p.n_k()), ref.dq),
              rel_l2(download<Elem>(a.dk, p.n_k()), ref.dk),
              rel_l2(download<Elem>(a.dg, p.n_k()), ref.dg));
}

template <typename Elem, int NL, int L, int CJ, int TC, int THREADS>
void run(const char* dtype, const problem& p, const scan_args& a, const references& ref,
         const flusher& f) {
  auto fwd = forward_kernel<Elem, NL, L, CJ, TC, THREADS>;
  auto dv = backward_dv_kernel<Elem, NL, L, CJ, TC, THREADS>;
  dim3 grid;
  const float fwd_ms =
      median_ms([&] { grid = launch_columns<Elem, NL, L, CJ, TC, THREADS>(fwd, p, a); }, f);
  const float dv_ms = median_ms([&] { launch_columns<Elem, NL, L, CJ, TC, THREADS>(dv, p, a); }, f);
  cudaFuncAttributes fa{}, da{};
  CHECK(cudaFuncGetAttributes(&fa, fwd));
  CHECK(cudaFuncGetAttributes(&da, dv));
  std::printf(
      "%-5s L=%d CJ=%d TC=%2d threads=%3d blocks=%5u regs %3d/%3d local %zu/%zu | fwd %.4f ms  "
      "o rel_l2 %.3g | dv %.4f ms  dv rel_l2 %.3g\n",
      dtype, L, CJ, TC, THREADS, grid.x * grid.y, fa.numRegs, da.numRegs, fa.localSizeBytes,
      da.localSizeBytes, fwd_ms, rel_l2(download<Elem>(a.o, p.n_v()), ref.o), dv_ms,
      rel_l2(download<Elem>(a.dv, p.n_v()), ref.dv));
}

// The fp32 forward with an fp64 state (launch.cu's precise fp32 mode): time and o's error.
template <int NL, int L, int CJ, int TC, int THREADS>
void run_fp32_state64(const problem& p, const scan_args& a, const references& ref,
                      const flusher& f) {
  auto fwd = forward_kernel<float, NL, L, CJ, TC, THREADS, double>;
  dim3 grid;
  const float ms = median_ms(
      [&] { grid = launch_columns<float, NL, L, CJ, TC, THREADS, double>(fwd, p, a); }, f);
  cudaFuncAttributes fa{};
  CHECK(cudaFuncGetAttributes(&fa, fwd));
  std::printf(
      "fp32, fp64 state  L=%d CJ=%d TC=%2d threads=%3d blocks=%5u regs %3d local %zu | fwd %.4f ms"
      "  o rel_l2 %.3g\n",
      L, CJ, TC, THREADS, grid.x * grid.y, fa.numRegs, fa.localSizeBytes, ms,
      rel_l2(download<float>(a.o, p.n_v()), ref.o));
}

// The fp64 kernels on the same rounded inputs.
template <int NL>
references reference_for(const problem& p, const host_inputs& in) {
  const scan_args a = device_args<double>(p, in);
  launch_columns<double, NL, 16, 2, 4, 128>(forward_kernel<double, NL, 16, 2, 4, 128>, p, a);
  launch_columns<double, NL, 16, 2, 4, 128>(backward_dv_kernel<double, NL, 16, 2, 4, 128>, p, a);
  launch_rows<double, NL, 16, 2, 4, 128>(p, a);
  CHECK(cudaDeviceSynchronize());
  return {download<double>(a.o, p.n_v()), download<double>(a.dv, p.n_v()),
          download<double>(a.dq, p.n_k()), download<double>(a.dk, p.n_k()),
          download<double>(a.dg, p.n_k())};
}

template <typename Elem, int NL>
void sweep(const char* dtype, const problem& p, const host_inputs& in, const flusher& f) {
  const references ref = reference_for<NL>(p, in);
  const scan_args a = device_args<Elem>(p, in);
  run<Elem, NL, 16, 2, 8, 128>(dtype, p, a, ref, f);
  run<Elem, NL, 16, 2, 16, 128>(dtype, p, a, ref, f);
  run<Elem, NL, 16, 4, 8, 128>(dtype, p, a, ref, f);
  run<Elem, NL, 16, 4, 16, 128>(dtype, p, a, ref, f);
  run_rows<Elem, NL, 16, 1, 8, 128>(dtype, p, a, ref, f);
  run_rows<Elem, NL, 16, 2, 8, 128>(dtype, p, a, ref, f);
  run_rows<Elem, NL, 16, 4, 8, 128>(dtype, p, a, ref, f);
  run_rows<Elem, NL, 16, 2, 16, 128>(dtype, p, a, ref, f);
  // The wide geometry (launch.cu: wide_tiles): 16 lanes of 8-long strips, 256 threads.
  run<Elem, 16, 8, 4, 8, 256>(dtype, p, a, ref, f);
  run<Elem, 16, 8, 4, 16, 256>(dtype, p, a, ref, f);
  run<Elem, 16, 8, 2, 8, 256>(dtype, p, a, ref, f);
  run<Elem, 16, 8, 2, 16, 256>(dtype, p, a, ref, f);
  run_rows<Elem, 16, 8, 4, 8, 256>(dtype, p, a, ref, f);
  run_rows<Elem, 16, 8, 4, 16, 256>(dtype, p, a, ref, f);
  run_rows<Elem, 16, 8, 2, 8, 256>(dtype, p, a, ref, f);
  run_rows<Elem, 16, 8, 2, 16, 256>(dtype, p, a, ref, f);
}

// fp64 compute (fast enough to keep fp32 inputs in an fp64 state?): the fp64 forward and
// dv kernels, narrow as the launch takes them and in the wide geometry.
void sweep_fp64(const problem& p, const host_inputs& in, const flusher& f) {
  const references ref = reference_for<8>(p, in);
  const scan_args a = device_args<double>(p, in);
  run<double, 8, 16, 2, 4, 128>("fp64", p, a, ref, f);
  run<double, 16, 8, 4, 4, 256>("fp64", p, a, ref, f);
  run<double, 16, 8, 4, 8, 256>("fp64", p, a, ref, f);
  run<double, 16, 8, 2, 8, 256>("fp64", p, a, ref, f);
  run<double, 16, 8, 2, 4, 256>("fp64", p, a, ref, f);
}

// fp32 storage with an fp64 state, against the fp32 kernels the launch takes.
void sweep_fp32_state64(const problem& p, const host_inputs& in, const flusher& f) {
  const references ref = reference_for<8>(p, in);
  const scan_args a = device_args<float>(p, in);
  run<float, 16, 8, 4, 8, 256>("fp32", p, a, ref, f);
  run<float, 8, 16, 2, 16, 128>("fp32", p, a, ref, f);
  run_fp32_state64<8, 16, 2, 8, 128>(p, a, ref, f);
  run_fp32_state64<16, 8, 4, 8, 256>(p, a, ref, f);
  run_fp32_state64<8, 16, 2, 4, 256>(p, a, ref, f);
  run_fp32_state64<8, 16, 2, 8, 256>(p, a, ref, f);
  run_fp32_state64<8, 16, 2, 16, 256>(p, a, ref, f);
  run_fp32_state64<8, 16, 1, 8, 256>(p, a, ref, f);
  run_fp32_state64<8, 16, 1, 16, 256>(p, a, ref, f);
}

}  // namespace

int main(int argc, char** argv) {
  problem p{4, 2048, 16, 128, 128};
  if (argc > 5) p = {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]),
                     std::atoll(argv[4]), std::atoll(argv[5])};
  if (argc > 6) samples = std::max(1, std::atoi(argv[6])), warmups = samples == 1 ? 0 : 5;
  if (p.K > 128 || p.K <= 64) {
    std::fprintf(stderr, "this sweep is built for 64 < K ≤ 128\n");
    return 2;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  auto draw = [&](size_t n, bool gate) {
    std::vector<float> x(n);
    for (auto& e : x) {
      const float z = normal(rng);
      e = gate ? -std::log1p(std::exp(-(z + 2.0f))) : z * 0.3f;
    }
    return x;
  };
  host_inputs in{draw(p.n_k(), false), draw(p.n_k(), false), draw(p.n_v(), false),
                 draw(p.n_k(), true),  draw(p.n_v(), false), draw(p.n_s(), false),
                 draw(p.n_s(), false)};
  host_inputs in_bf16{round_bf16(in.q),   round_bf16(in.k),  round_bf16(in.v),  round_bf16(in.g),
                      round_bf16(in.d_o), round_bf16(in.h0), round_bf16(in.dht)};
  std::printf("B=%lld T=%lld H=%lld K=%lld V=%lld\n", (long long)p.B, (long long)p.T,
              (long long)p.H, (long long)p.K, (long long)p.V);
  const flusher f;
  if (argc > 7 && std::string(argv[7]) == "fp64") {
    sweep_fp64(p, in, f);
    return 0;
  }
  if (argc > 7 && std::string(argv[7]) == "fp32_state64") {
    sweep_fp32_state64(p, in, f);
    return 0;
  }
  sweep<float, 8>("fp32", p, in, f);
  sweep<__nv_bfloat16, 8>("bf16", p, in_bf16, f);
  return 0;
}
