// RING_SOFTMAX_CUDA_SHARDS = 1…8 against the unsharded computation, on the GPU: o, lse
// and (with a cotangent) dq, dk, dv of the ring's schedule on N shards must equal one
// block over the whole sequence — fp64 to 1e-12, fp32 and bf16 within the verify
// thresholds (1e-5, 1e-2), rel_l2 — for ragged shards (T = 257, not a multiple of any
// N > 1), causal and not, both layouts, D ≠ V, and the cuDNN blocks where cuDNN loads.
// A packed batch (cu_seqlens) must equal its sequences run one by one, and sharded its
// unsharded run. Exit 77 (skipped) without a GPU.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../common/cuda_error.hpp"
#include "../cudnn_block.hpp"
#include "../launch.hpp"

namespace ring = glabench::ring;

namespace {

int failures = 0;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s\n", glabench::cuda_plugin::cuda_error(e, what).c_str());
    std::exit(1);
  }
}

uint16_t to_bf16(double x) {
  const float f = static_cast<float>(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even (inputs are finite)
  return uint16_t(u >> 16);
}
double from_bf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

size_t bytes_of(ring::storage s) {
  return s == ring::storage::fp64 ? 8 : s == ring::storage::fp32 ? 4 : 2;
}

// A device tensor filled from / read back as doubles in a given dtype.
struct device_tensor {
  void* ptr = nullptr;
  size_t n = 0, elem = 0;
  ring::storage dtype{};
  device_tensor(size_t count, size_t elem_bytes, ring::storage d)
      : n(count), elem(elem_bytes), dtype(d) {
    check_cuda(cudaMalloc(&ptr, n * elem), "cudaMalloc");
    check_cuda(cudaMemset(ptr, 0xff, n * elem), "cudaMemset");  // NaN-filled: unwritten shows
  }
  ~device_tensor() { cudaFree(ptr); }
  void upload(const std::vector<double>& x) {
    std::vector<unsigned char> raw(n * elem);
    for (size_t i = 0; i < n; ++i) {
      if (elem == 8) std::memcpy(&raw[i * 8], &x[i], 8);
      if (elem == 4) {
        const float f = float(x[i]);
        std::memcpy(&raw[i * 4], &f, 4);
      }
      if (elem == 2) {
        const uint16_t h = dtype == ring::storage::fp16
                               ? __half_as_ushort(__float2half_rn(float(x[i])))
                               : to_bf16(x[i]);
        std::memcpy(&raw[i * 2], &h, 2);
      }
    }
    check_cuda(cudaMemcpy(ptr, raw.data(), raw.size(), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<double> download() const {
    std::vector<unsigned char> raw(n * elem);
    check_cuda(cudaMemcpy(raw.data(), ptr, raw.size(), cudaMemcpyDeviceToHost), "download");
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i) {
      if (elem == 8) std::memcpy(&x[i], &raw[i * 8], 8);
      if (elem == 4) {
        float f;
        std::memcpy(&f, &raw[i * 4], 4);
        x[i] = f;
      }
      if (elem == 2) {
        uint16_t h;
        std::memcpy(&h, &raw[i * 2], 2);
        x[i] =
            dtype == ring::storage::fp16 ? double(__half2float(__ushort_as_half(h))) : from_bf16(h);
      }
    }
    return x;
  }
};

double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct outputs {
  std::vector<double> o, lse, dq, dk, dv;
};

struct inputs {
  std::vector<double> q, k, v, d_o;
};

// cu_seqlens: a packed batch's device offsets (p.num_seqs > 0).
outputs run(const ring::problem& p, const inputs& x, const int32_t* cu_seqlens = nullptr) {
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  const size_t e = bytes_of(p.dtype), le = p.dtype == ring::storage::fp64 ? 8 : 4;
  device_tensor q(tokens * p.D, e, p.dtype), k(tokens * p.D, e, p.dtype),
      v(tokens * p.V, e, p.dtype);
  device_tensor o(tokens * p.V, e, p.dtype), lse(stats, le, p.dtype), d_o(tokens * p.V, e, p.dtype);
  device_tensor dq(tokens * p.D, e, p.dtype), dk(tokens * p.D, e, p.dtype),
      dv(tokens * p.V, e, p.dtype);
  q.upload(x.q);
  k.upload(x.k);
  v.upload(x.v);
  d_o.upload(x.d_o);
  const size_t fws = ring::forward_workspace_bytes(p), bws = ring::backward_workspace_bytes(p);
  void* ws = nullptr;
  check_cuda(cudaMalloc(&ws, std::max<size_t>(std::max(fws, bws), 1)), "cudaMalloc workspace");
  ring::status s =
      ring::run_forward(p, {q.ptr, k.ptr, v.ptr, o.ptr, lse.ptr, ws, fws, nullptr, cu_seqlens});
  if (s.empty())
    s = ring::run_backward(p, {q.ptr, k.ptr, v.ptr, o.ptr, lse.ptr, d_o.ptr, dq.ptr, dk.ptr, dv.ptr,
                               ws, bws, nullptr, cu_seqlens});
  if (!s.empty()) {
    std::fprintf(stderr, "run failed: %s\n", s.c_str());
    std::exit(1);
  }
  check_cuda(cudaDeviceSynchronize(), "synchronize");
  cudaFree(ws);
  return {o.download(), lse.download(), dq.download(), dk.download(), dv.download()};
}

const char* dtype_name(ring::storage s) {
  return s == ring::storage::fp64   ? "fp64"
         : s == ring::storage::fp32 ? "fp32"
         : s == ring::storage::fp16 ? "fp16"
                                    : "bf16";
}

void compare(const char* label, const ring::problem& p, const outputs& got, const outputs& want,
             double tol) {
  const std::pair<const char*, double> errs[] = {{"o", rel_l2(got.o, want.o)},
                                                 {"lse", rel_l2(got.lse, want.lse)},
                                                 {"dq", rel_l2(got.dq, want.dq)},
                                                 {"dk", rel_l2(got.dk, want.dk)},
                                                 {"dv", rel_l2(got.dv, want.dv)}};
  double worst = 0;
  const char* worst_name = "";
  for (const auto& [name, err] : errs)
    if (!(err <= worst)) {
      worst = err;
      worst_name = name;
    }
  const bool ok = worst <= tol;
  failures += ok ? 0 : 1;
  std::printf("%-4s %s %-8s %-6s %-5s N=%d  worst rel_l2 %.2e (%s)  tol %.0e  %s\n",
              ok ? "ok" : "FAIL", dtype_name(p.dtype), p.causal ? "causal" : "full",
              ring::layout_name(p.chunking), label, p.shards, worst, worst_name, tol,
              ok ? "" : "<--");
}

// The tests' problems: two heads, D ≠ V (24, 40) on the own kernel, D = V = 64 (multiples
// of 8) on cuDNN.
ring::problem test_problem(ring::storage dtype, int B, int64_t T, bool cudnn) {
  ring::problem p{};
  p.dtype = dtype;
  p.B = B;
  p.H = 2;
  p.D = cudnn ? 64 : 24;
  p.V = cudnn ? 64 : 40;
  p.T = T;
  p.scale = 1.0 / std::sqrt(double(p.D));
  p.block = cudnn ? ring::block_kernel::cudnn : ring::block_kernel::own;
  return p;
}

inputs random_inputs(const ring::problem& p, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  const size_t tokens = size_t(p.B) * p.T * p.H;
  inputs x;
  for (auto* t : {&x.q, &x.k}) {
    t->resize(tokens * p.D);
    for (double& y : *t) y = normal(rng);
  }
  for (auto* t : {&x.v, &x.d_o}) {
    t->resize(tokens * p.V);
    for (double& y : *t) y = normal(rng);
  }
  return x;
}

// Tokens [begin, end) of every [1,T,H,X] tensor of `x`.
inputs token_slice(const inputs& x, const ring::problem& p, int64_t begin, int64_t end) {
  const auto cut = [&](const std::vector<double>& t, int X) {
    return std::vector<double>(t.begin() + begin * p.H * X, t.begin() + end * p.H * X);
  };
  return {cut(x.q, p.D), cut(x.k, p.D), cut(x.v, p.V), cut(x.d_o, p.V)};
}

// A packed batch of sequences of 1 to 80 tokens, one at each end of length 1 (T = 257),
// against each sequence alone (B = 1, T its length); on the own kernel (D ≠ V) also
// sharded against itself unsharded, on cuDNN (D = V = 64) a block a sequence, the
// one-token ones, which cuDNN refuses, on the own kernel.
void check_packed(ring::storage dtype, double tol, bool cudnn, std::mt19937_64& rng) {
  const std::vector<int32_t> lengths = {1, 15, 16, 17, 63, 64, 80, 1};
  std::vector<int32_t> offsets = {0};
  for (const int32_t n : lengths) offsets.push_back(offsets.back() + n);
  ring::problem p = test_problem(dtype, 1, offsets.back(), cudnn);
  p.num_seqs = int64_t(lengths.size());
  const std::vector<int64_t> host_offsets(offsets.begin(), offsets.end());
  p.offsets = &host_offsets;
  if (cudnn) {  // the graphs, planned (the plugin's prepare); one-token ones refused
    int64_t bytes = 0;
    ring::plan_cudnn_blocks(p, false, &bytes);
    ring::plan_cudnn_blocks(p, true, &bytes);
  }
  int32_t* cu = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&cu), offsets.size() * sizeof(int32_t)),
             "cudaMalloc cu_seqlens");
  check_cuda(
      cudaMemcpy(cu, offsets.data(), offsets.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      "upload cu_seqlens");
  const inputs x = random_inputs(p, rng);
  for (const bool causal : {false, true}) {
    p.causal = causal;
    p.shards = 1;
    p.chunking = ring::layout::ring;
    const outputs packed = run(p, x, cu);
    // Each sequence alone, its outputs put where the packed batch has them.
    outputs alone{std::vector<double>(packed.o.size()), std::vector<double>(packed.lse.size()),
                  std::vector<double>(packed.dq.size()), std::vector<double>(packed.dk.size()),
                  std::vector<double>(packed.dv.size())};
    for (size_t n = 0; n < lengths.size(); ++n) {
      ring::problem one = p;
      one.T = lengths[n];
      one.num_seqs = 0;
      one.offsets = nullptr;
      int64_t bytes = 0;  // a shape cuDNN refuses alone (one token): the own kernel's
      if (cudnn && (!ring::plan_cudnn_blocks(one, false, &bytes).empty() ||
                    !ring::plan_cudnn_blocks(one, true, &bytes).empty()))
        one.block = ring::block_kernel::own;
      const outputs y = run(one, token_slice(x, p, offsets[n], offsets[n + 1]));
      const auto place = [&](const std::vector<double>& from, std::vector<double>& to, int X) {
        std::copy(from.begin(), from.end(), to.begin() + int64_t(offsets[n]) * p.H * X);
      };
      place(y.o, alone.o, p.V);
      place(y.dq, alone.dq, p.D);
      place(y.dk, alone.dk, p.D);
      place(y.dv, alone.dv, p.V);
      for (int h = 0; h < p.H; ++h)
        for (int32_t t = 0; t < lengths[n]; ++t)
          alone.lse[size_t(h) * p.T + offsets[n] + t] = y.lse[size_t(h) * lengths[n] + t];
    }
    compare(cudnn ? "packed cudnn" : "packed", p, packed, alone, tol);
    if (cudnn) continue;
    for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag})
      for (int n = 2; n <= 8; n += 3) {
        p.shards = n;
        p.chunking = l;
        compare("packed", p, run(p, x, cu), packed, tol);
      }
  }
  cudaFree(cu);
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  std::string why;
  const bool have_cudnn = ring::cudnn_block::library_loaded(&why);
  std::printf(
      "cuDNN blocks: %s\n",
      have_cudnn ? std::to_string(ring::cudnn_block::library_version()).c_str() : why.c_str());

  std::mt19937_64 rng(20261123);
  for (const ring::storage dtype :
       {ring::storage::fp64, ring::storage::fp32, ring::storage::bf16, ring::storage::fp16}) {
    const double tol = dtype == ring::storage::fp64   ? 1e-12
                       : dtype == ring::storage::fp32 ? 1e-5
                                                      : 1e-2;
    // Ragged T (257) on both kernels.
    for (const bool cudnn : {false, true}) {
      if (cudnn && (!ring::is_16bit(dtype) || !have_cudnn)) continue;
      ring::problem p = test_problem(dtype, 2, 257, cudnn);
      const inputs x = random_inputs(p, rng);
      for (const bool causal : {false, true}) {
        p.causal = causal;
        p.shards = 1;
        p.chunking = ring::layout::ring;
        const outputs whole = run(p, x);
        for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag})
          for (int n = 1; n <= 8; ++n) {
            if (l == ring::layout::ring && n == 1) continue;
            p.shards = n;
            p.chunking = l;
            compare(cudnn ? "cudnn" : "own", p, run(p, x), whole, tol);
          }
      }
    }
    check_packed(dtype, tol, false, rng);
    if (ring::is_16bit(dtype) && have_cudnn) check_packed(dtype, tol, true, rng);
  }
  std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
