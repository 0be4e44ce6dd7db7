// The tuning sweep behind tiles.cuh: times forward-, dv- and row-kernel tile shapes
// (strip length L, columns or rows per thread, chunk TC, block size) on one problem in
// fp32 and bf16, so that the launch's choices rest on numbers.
//
// It measures exactly what `glabench bench` would: each variant launched as the launch
// sizes it (kernel_variants.cuh), timed by the harness's bench_device (CUDA events on the
// stream, one L2-sized flush before each sample) under the bench's default warm-ups and
// stopping rule, the median reported; o's (dv's, dq's, …) rel_l2 from the harness's
// tensor_check against the fp64 kernels on the same rounded inputs (random inputs, gates
// log σ of normals, h0 and dht present).
//
// usage: build/hopper/parallel_scan_cuda_tile_sweep [B T H K V [SAMPLES [MODE]]]
//   default 4 2048 16 128 128; SAMPLES=1 launches every kernel once, no warm-up (for a
//   profiler), any other value keeps the bench's rule; MODE fp64: only the fp64 forward
//   and dv kernels; fp32_state64: the fp32 forward with an fp64 state (precise mode);
//   rwkv6: fused_recurrent_rwkv6_cuda's fast-mode kernels in bf16 at the wide geometry's
//   widths and chunks.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_device.hpp"
#include "cuda_check.hpp"
#include "kernel_variants.cuh"
#include "statistics.hpp"
#include "tensor_check.hpp"

using namespace glabench::parallel_scan;
using glabench::check_cuda;

namespace {

struct problem {
  int64_t B, T, H, K, V;
  size_t n_k() const { return size_t(B * T * H * K); }
  size_t n_v() const { return size_t(B * T * H * V); }
  size_t n_s() const { return size_t(B * H * K * V); }
};

// Host inputs in fp32: q, k, v, do ~ N(0, 0.3²), g = log σ(N(2, 1)), h0, dht ~ N(0, 0.3²).
struct host_inputs {
  std::vector<float> q, k, v, g, d_o, h0, dht, u;
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

void* device_alloc(size_t bytes) {
  void* d = nullptr;
  check_cuda(cudaMalloc(&d, bytes), "cudaMalloc");
  return d;
}
template <typename T>
void* upload(const std::vector<T>& x) {
  void* d = device_alloc(x.size() * sizeof(T));
  check_cuda(cudaMemcpy(d, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

// Device arguments with storage type T from host fp32 values (already rounded). The
// sweep runs once per process, so its buffers live until it exits.
template <typename T>
scan_args device_args(const problem& p, const host_inputs& in, recurrence op = recurrence::gla) {
  scan_args a{};
  a.B = p.B, a.T = p.T, a.H = p.H, a.K = p.K, a.V = p.V;
  a.scale = 1.0 / std::sqrt(double(p.K));
  a.q = upload(convert<T>(in.q)), a.k = upload(convert<T>(in.k)), a.v = upload(convert<T>(in.v));
  a.g = upload(convert<T>(in.g)), a.d_o = upload(convert<T>(in.d_o));
  a.h0 = upload(convert<T>(in.h0)), a.dht = upload(convert<T>(in.dht));
  a.o = device_alloc(p.n_v() * sizeof(T));
  a.dv = device_alloc(p.n_v() * sizeof(T));
  a.ht = device_alloc(p.n_s() * sizeof(T));
  a.dh0 = device_alloc(p.n_s() * sizeof(T));
  a.dq = device_alloc(p.n_k() * sizeof(T));
  a.dk = device_alloc(p.n_k() * sizeof(T));
  a.dg = device_alloc(p.n_k() * sizeof(T));
  constexpr storage s = std::is_same_v<T, double>  ? storage::fp64
                        : std::is_same_v<T, float> ? storage::fp32
                                                   : storage::bf16;
  a.workspace = device_alloc(backward_workspace_bytes(op, s, p.B * p.T, p.B, p.H, p.K));
  a.u = upload(convert<T>(in.u));  // rwkv6's bonus [H,K]
  a.du = device_alloc(size_t(p.H * p.K) * sizeof(T));
  return a;
}

template <typename T>
glabench::tensor download(const void* d, size_t n) {
  std::vector<T> x(n);
  check_cuda(cudaMemcpy(x.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  glabench::tensor y({int64_t(n)});
  for (size_t i = 0; i < n; ++i) y.data[i] = double(x[i]);
  return y;
}
template <>
glabench::tensor download<__nv_bfloat16>(const void* d, size_t n) {
  std::vector<__nv_bfloat16> x(n);
  check_cuda(cudaMemcpy(x.data(), d, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  glabench::tensor y({int64_t(n)});
  for (size_t i = 0; i < n; ++i) y.data[i] = double(__bfloat162float(x[i]));
  return y;
}

// rel_l2 of a result against the fp64 kernels' (tensor_check: NaN when not finite).
double rel_l2(const glabench::tensor& got, const glabench::tensor& want) {
  return glabench::compare_tensor("", got, want, 0).rel_l2;
}

// How the sweep samples: the bench's warm-ups and stopping rule, or one launch.
struct sampling {
  std::unique_ptr<glabench::bench_device> device = glabench::make_cuda_bench_device(0, nullptr);
  glabench::stopping_rule rule;
  int warmups = glabench::kDefaultWarmupCalls;
};
sampling* sampler = nullptr;

void launched(cudaError_t e) {
  check_cuda(e, "kernel launch");
}

// The median time of `launch` (which enqueues on the default stream), in milliseconds.
template <typename Launch>
double median_ms(Launch&& launch) {
  glabench::stopping_criterion stop(sampler->rule);
  glabench::take_samples(*sampler->device, stop, sampler->warmups, false,
                         [&] { launched(launch()); });
  return glabench::summarize(stop.samples()).median;
}

template <typename Variant>
cudaFuncAttributes attributes() {
  cudaFuncAttributes fa{};
  check_cuda(cudaFuncGetAttributes(&fa, Variant::kernel), "cudaFuncGetAttributes");
  return fa;
}
template <typename Variant>
long long blocks(const problem& p, int64_t owned) {
  return (owned + Variant::kPerBlock - 1) / Variant::kPerBlock * p.B * p.H;
}

struct references {
  glabench::tensor o, dv, dq, dk, dg;
};

// The recurrence's name, padded to one width for the sweep's columns.
constexpr const char* recurrence_name(recurrence op) {
  return op == recurrence::gla ? "gla  " : "rwkv6";
}

template <typename Elem, int NL, int L, int RJ, int TC, int THREADS,
          recurrence OP = recurrence::gla>
void run_rows(const char* dtype, const problem& p, const scan_args& a, const references& ref) {
  using rows = row_kernel<OP, Elem, NL, L, THREADS, RJ, TC>;
  const double dot_ms = median_ms([&] { return rows::run_token_dot(a); });
  const double ms = median_ms([&] { return rows::run(a); });
  const cudaFuncAttributes ra = attributes<rows>();
  std::printf(
      "%-5s %s rows L=%2d RJ=%d TC=%2d threads=%3d regs %3d local %zu | v·do + dq/dk/dg "
      "%.4f ms (v·do alone %.4f)  rel_l2 dq %.3g dk %.3g dg %.3g\n",
      dtype, recurrence_name(OP), L, RJ, TC, THREADS, ra.numRegs, ra.localSizeBytes, ms, dot_ms,
      rel_l2(download<Elem>(a.dq, p.n_k()), ref.dq), rel_l2(download<Elem>(a.dk, p.n_k()), ref.dk),
      rel_l2(download<Elem>(a.dg, p.n_k()), ref.dg));
}

// The forward and dv column kernels at one tile shape (dv with its own chunk, TC_DV).
template <typename Elem, int NL, int L, int CJ, int TC, int THREADS,
          recurrence OP = recurrence::gla, int TC_DV = TC>
void run(const char* dtype, const problem& p, const scan_args& a, const references& ref) {
  using fwd = column_kernel<OP, Elem, NL, L, THREADS, CJ, TC, false>;
  using dv = column_kernel<OP, Elem, NL, L, THREADS, CJ, TC_DV, true>;
  const double fwd_ms = median_ms([&] { return fwd::run(a); });
  const double dv_ms = median_ms([&] { return dv::run(a); });
  const cudaFuncAttributes fa = attributes<fwd>(), da = attributes<dv>();
  std::printf(
      "%-5s %s L=%2d CJ=%d TC=%2d/%2d threads=%3d blocks=%5lld regs %3d/%3d local %zu/%zu | "
      "fwd %.4f ms  o rel_l2 %.3g | dv %.4f ms  dv rel_l2 %.3g\n",
      dtype, recurrence_name(OP), L, CJ, TC, TC_DV, THREADS, blocks<fwd>(p, p.V), fa.numRegs,
      da.numRegs, fa.localSizeBytes, da.localSizeBytes, fwd_ms,
      rel_l2(download<Elem>(a.o, p.n_v()), ref.o), dv_ms,
      rel_l2(download<Elem>(a.dv, p.n_v()), ref.dv));
}

// The fp32 forward with an fp64 state (the precise fp32 mode): time and o's error.
template <int NL, int L, int CJ, int TC, int THREADS>
void run_fp32_state64(const problem& p, const scan_args& a, const references& ref) {
  using fwd = column_kernel<recurrence::gla, float, NL, L, THREADS, CJ, TC, false, double>;
  const double ms = median_ms([&] { return fwd::run(a); });
  const cudaFuncAttributes fa = attributes<fwd>();
  std::printf(
      "fp32, fp64 state  L=%d CJ=%d TC=%2d threads=%3d blocks=%5lld regs %3d local %zu | fwd %.4f "
      "ms"
      "  o rel_l2 %.3g\n",
      L, CJ, TC, THREADS, blocks<fwd>(p, p.V), fa.numRegs, fa.localSizeBytes, ms,
      rel_l2(download<float>(a.o, p.n_v()), ref.o));
}

// The fp64 kernels on the same rounded inputs.
template <int NL, recurrence OP = recurrence::gla>
references reference_for(const problem& p, const host_inputs& in) {
  const scan_args a = device_args<double>(p, in, OP);
  launched(column_kernel<OP, double, NL, 16, 128, 2, 4, false>::run(a));
  launched(column_kernel<OP, double, NL, 16, 128, 2, 4, true>::run(a));
  launched(row_kernel<OP, double, NL, 16, 128, 2, 4>::run(a));
  check_cuda(cudaDeviceSynchronize(), "fp64 reference kernels");
  return {download<double>(a.o, p.n_v()), download<double>(a.dv, p.n_v()),
          download<double>(a.dq, p.n_k()), download<double>(a.dk, p.n_k()),
          download<double>(a.dg, p.n_k())};
}

template <typename Elem, int NL>
void sweep(const char* dtype, const problem& p, const host_inputs& in) {
  const references ref = reference_for<NL>(p, in);
  const scan_args a = device_args<Elem>(p, in);
  run<Elem, NL, 16, 2, 8, 128>(dtype, p, a, ref);
  run<Elem, NL, 16, 2, 16, 128>(dtype, p, a, ref);
  run<Elem, NL, 16, 4, 8, 128>(dtype, p, a, ref);
  run<Elem, NL, 16, 4, 16, 128>(dtype, p, a, ref);
  run_rows<Elem, NL, 16, 1, 8, 128>(dtype, p, a, ref);
  run_rows<Elem, NL, 16, 2, 8, 128>(dtype, p, a, ref);
  run_rows<Elem, NL, 16, 4, 8, 128>(dtype, p, a, ref);
  run_rows<Elem, NL, 16, 2, 16, 128>(dtype, p, a, ref);
  // The wide geometry (tiles.cuh: wide_tiles): 16 lanes of 8-long strips, 256 threads.
  run<Elem, 16, 8, 4, 8, 256>(dtype, p, a, ref);
  run<Elem, 16, 8, 4, 16, 256>(dtype, p, a, ref);
  run<Elem, 16, 8, 2, 8, 256>(dtype, p, a, ref);
  run<Elem, 16, 8, 2, 16, 256>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 4, 8, 256>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 4, 16, 256>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 2, 8, 256>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 2, 16, 256>(dtype, p, a, ref);
}

// fp64 compute (fast enough to keep fp32 inputs in an fp64 state?): the fp64 forward and
// dv kernels, narrow as the launch takes them and in the wide geometry.
void sweep_fp64(const problem& p, const host_inputs& in) {
  const references ref = reference_for<8>(p, in);
  const scan_args a = device_args<double>(p, in);
  run<double, 8, 16, 2, 4, 128>("fp64", p, a, ref);
  run<double, 16, 8, 4, 4, 256>("fp64", p, a, ref);
  run<double, 16, 8, 4, 8, 256>("fp64", p, a, ref);
  run<double, 16, 8, 2, 8, 256>("fp64", p, a, ref);
  run<double, 16, 8, 2, 4, 256>("fp64", p, a, ref);
}

// fp32 storage with an fp64 state, against the fp32 kernels the launch takes.
void sweep_fp32_state64(const problem& p, const host_inputs& in) {
  const references ref = reference_for<8>(p, in);
  const scan_args a = device_args<float>(p, in);
  run<float, 16, 8, 4, 8, 256>("fp32", p, a, ref);
  run<float, 8, 16, 2, 16, 128>("fp32", p, a, ref);
  run_fp32_state64<8, 16, 2, 8, 128>(p, a, ref);
  run_fp32_state64<16, 8, 4, 8, 256>(p, a, ref);
  run_fp32_state64<8, 16, 2, 4, 256>(p, a, ref);
  run_fp32_state64<8, 16, 2, 8, 256>(p, a, ref);
  run_fp32_state64<8, 16, 2, 16, 256>(p, a, ref);
  run_fp32_state64<8, 16, 1, 8, 256>(p, a, ref);
  run_fp32_state64<8, 16, 1, 16, 256>(p, a, ref);
}

// rwkv6's kernels at the wide geometry's widths and chunks (the launch's at B4 T2048
// H16 D128: forward 8-token chunks at width 4, dv 16, rows 8), and the alternatives.
template <typename Elem>
void sweep_rwkv6(const char* dtype, const problem& p, const host_inputs& in) {
  constexpr recurrence OP = recurrence::rwkv6;
  const references ref = reference_for<8, OP>(p, in);
  const scan_args a = device_args<Elem>(p, in, OP);
  run<Elem, 16, 8, 4, 8, 256, OP, 16>(dtype, p, a, ref);
  run<Elem, 16, 8, 4, 8, 256, OP, 8>(dtype, p, a, ref);
  run<Elem, 16, 8, 2, 16, 256, OP, 16>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 4, 8, 256, OP>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 4, 16, 256, OP>(dtype, p, a, ref);
  run_rows<Elem, 16, 8, 2, 16, 256, OP>(dtype, p, a, ref);
}

int sweep_main(int argc, char** argv) {
  problem p{4, 2048, 16, 128, 128};
  if (argc > 5)
    p = {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
         std::atoll(argv[5])};
  if (p.K > 128 || p.K <= 64) {
    std::fprintf(stderr, "this sweep is built for 64 < K ≤ 128\n");
    return 2;
  }
  sampling s;
  if (argc > 6 && std::atoi(argv[6]) == 1) s.rule.max_reps = 1, s.warmups = 0;
  sampler = &s;
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
  host_inputs in{draw(p.n_k(), false), draw(p.n_k(), false),          draw(p.n_v(), false),
                 draw(p.n_k(), true),  draw(p.n_v(), false),          draw(p.n_s(), false),
                 draw(p.n_s(), false), draw(size_t(p.H * p.K), false)};
  host_inputs in_bf16{round_bf16(in.q),   round_bf16(in.k),  round_bf16(in.v),   round_bf16(in.g),
                      round_bf16(in.d_o), round_bf16(in.h0), round_bf16(in.dht), round_bf16(in.u)};
  std::printf(
      "B=%lld T=%lld H=%lld K=%lld V=%lld; medians under glabench bench's rule "
      "(%d warm-ups, cv ≤ %g after %d samples, at most %d samples or %g s)\n",
      (long long)p.B, (long long)p.T, (long long)p.H, (long long)p.K, (long long)p.V, s.warmups,
      s.rule.noise_target, s.rule.min_reps, s.rule.max_reps, s.rule.time_cap_s);
  const std::string mode = argc > 7 ? argv[7] : "";
  if (mode == "fp64") {
    sweep_fp64(p, in);
  } else if (mode == "fp32_state64") {
    sweep_fp32_state64(p, in);
  } else if (mode == "rwkv6") {
    sweep_rwkv6<__nv_bfloat16>("bf16", p, in_bf16);
  } else {
    sweep<float, 8>("fp32", p, in);
    sweep<__nv_bfloat16, 8>("bf16", p, in_bf16);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return sweep_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile sweep: %s\n", e.what());
    return 1;
  }
}
