// Decoding with the state moved by Hopper's bulk-copy engine (TMA's cp.async.bulk): the
// decode kernel (decode_kernel.cuh) for fp32 states where they allow it. A block takes a
// slab of one sequence·head's state — all K rows of `cw` value columns, every column where
// the K×V state fits in kSlabBytes (64 KiB at K = V = 128) — into shared memory:
//
//   the slab arrives in kGroups row groups, each a bulk copy (one for a group of whole
//   rows, where the slab is the whole state; else one a row) completing on the group's
//   mbarrier, so the first group computes while the others are still in flight;
//   a thread takes one column j of the slab and rows part, part + tpc, … (tpc = threads ÷
//   cw), updating S in place: S = e^{g} ⊙ S + kᵀv (gla: before o; rwkv6: after), o_j's
//   partial sum of q_i S_ij over its rows;
//   after the last token each row group leaves as a bulk store as soon as it is computed;
//   the partial sums meet in shared memory (two buffers, as in the register kernel).
//
// Against the register kernel, whose threads hold the state and issue its loads and stores
// themselves, the copies cost the SM a few instructions, and a block's stores overlap the
// next block's loads: on an H200 (2026-12-02, reports/2026-12-02-h200-decode-bulk-copies)
// the step moved 81 % of a 1 GiB memcpy's bandwidth at B64 H16 D128 and 92 % at B256,
// gla and rwkv6 alike, where the register kernel moved 69 / 73 % (gla) and 59 / 63 %
// (rwkv6). Gates are applied as e^{g} a token at a time, as there.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../mbarrier.cuh"
#include "occupancy.cuh"
#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::parallel_scan {

// The PTX of the bulk copies (sm_90); their barriers' init and wait: ../mbarrier.cuh.
namespace bulk {
using mbarrier::smem_addr;
// The barriers' initialisation, visible to the copy engine before a copy names them.
__device__ __forceinline__ void fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// The one arrival the barrier's phase waits for, with the bytes its copies will bring.
__device__ __forceinline__ void arrive_expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
// Global → shared, `bytes` a multiple of 16 from 16-byte-aligned addresses.
__device__ __forceinline__ void load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
// Shared → global; the thread's earlier writes to the source must be fenced (fence_smem).
__device__ __forceinline__ void store(void* dst, const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
               "r"(smem_addr(src)), "r"(bytes)
               : "memory");
}
// Threads' shared-memory writes, visible to the copy engine.
__device__ __forceinline__ void fence_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// Until this thread's stores have read shared memory (the block may then exit; the
// writes to global memory complete with the grid).
__device__ __forceinline__ void wait_stores_read() {
  asm volatile("cp.async.bulk.commit_group;\n cp.async.bulk.wait_group.read 0;" ::: "memory");
}
}  // namespace bulk

struct decode_bulk_tiles {
  static constexpr int kThreads = 256;
  static constexpr int kGroups = 4;
  static constexpr int64_t kSlabBytes = 64 << 10;  // three blocks an SM
};

// The columns a block takes: all V where the K×V fp32 state fits in a slab, else the most
// that fit, a multiple of 4 (16-byte rows).
inline int64_t decode_bulk_columns(int64_t K, int64_t V) {
  const int64_t fit = decode_bulk_tiles::kSlabBytes / (K * int64_t(sizeof(float)));
  return V <= fit ? V : fit / 4 * 4;
}

template <recurrence OP, typename Elem>
__global__ void __launch_bounds__(decode_bulk_tiles::kThreads)
    decode_bulk_kernel(scan_args a, int cw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using C = compute_t<Elem>;
  using t = decode_bulk_tiles;
  static_assert(std::is_same_v<C, float>, "fp32 states, fp32 compute");
  extern __shared__ __align__(128) float S[];  // [K][width]
  __shared__ __align__(8) uint64_t full[t::kGroups];
  __shared__ C qs[kMaxHeadSize], ks[kMaxHeadSize], es[kMaxHeadSize];
  __shared__ C partial[2][t::kThreads];
  __shared__ C bonus_part[2][t::kThreads / 32];

  const int K = int(a.K), tid = threadIdx.x;
  const int64_t h = blockIdx.y % a.H;
  const sequence_span seq = sequence_of(a, blockIdx.y / a.H);
  const int64_t c0 = int64_t(blockIdx.x) * cw;
  const int width = int(a.V - c0 < cw ? a.V - c0 : cw);  // a multiple of 4
  const bool whole_rows = width == a.V;                  // the slab is contiguous
  const int64_t state0 = int64_t(blockIdx.y) * a.K * a.V + c0;
  const float* h0 = static_cast<const float*>(a.h0);
  float* ht = static_cast<float*>(a.ht);
  const int group_rows = (K + t::kGroups - 1) / t::kGroups;
  auto first_row = [&](int gi) { return gi * group_rows < K ? gi * group_rows : K; };
  const uint32_t row_bytes = uint32_t(width) * sizeof(float);

  if (h0) {
    if (tid == 0) {
      for (int gi = 0; gi < t::kGroups; ++gi) mbarrier::init(&full[gi], 1);
      bulk::fence_init();
      for (int gi = 0; gi < t::kGroups; ++gi)
        bulk::arrive_expect(&full[gi], uint32_t(first_row(gi + 1) - first_row(gi)) * row_bytes);
    }
    __syncthreads();  // the barriers, before any copy names them
    if (whole_rows) {
      if (tid < t::kGroups && first_row(tid + 1) > first_row(tid))
        bulk::load(S + int64_t(first_row(tid)) * width, h0 + state0 + first_row(tid) * a.V,
                   uint32_t(first_row(tid + 1) - first_row(tid)) * row_bytes, &full[tid]);
    } else {
      for (int r = tid; r < K; r += t::kThreads)
        bulk::load(S + int64_t(r) * width, h0 + state0 + r * a.V, row_bytes, &full[r / group_rows]);
    }
  } else {
    for (int i = tid; i < K * width; i += t::kThreads) S[i] = 0.f;
  }
  // A row group, computed, leaves for ht.
  auto store_group = [&](int gi) {
    const int r0 = first_row(gi), r1 = first_row(gi + 1);
    bulk::fence_smem();
    __syncthreads();
    if (whole_rows) {
      if (tid == 0 && r1 > r0)
        bulk::store(ht + state0 + r0 * a.V, S + int64_t(r0) * width, uint32_t(r1 - r0) * row_bytes);
    } else {
      for (int r = r0 + tid; r < r1; r += t::kThreads)
        bulk::store(ht + state0 + r * a.V, S + int64_t(r) * width, row_bytes);
    }
  };

  const Elem* q = static_cast<const Elem*>(a.q);
  const Elem* k = static_cast<const Elem*>(a.k);
  const Elem* v = static_cast<const Elem*>(a.v);
  const Elem* g = static_cast<const Elem*>(a.g);
  const Elem* u = static_cast<const Elem*>(a.u);  // rwkv6: [H,K]
  Elem* o = static_cast<Elem*>(a.o);
  const C scale = static_cast<C>(a.scale);
  const int tpc = t::kThreads / width, j = tid % width, part = tid / width;
  const bool active = part < tpc;

  for (int64_t tt = 0; tt < seq.T; ++tt) {
    const int64_t token = seq.bos + tt;
    const int64_t key0 = (token * a.H + h) * a.K, value0 = (token * a.H + h) * a.V + c0;
    const int buf = int(tt & 1);
    C bonus = C(0);
    for (int i = tid; i < K; i += t::kThreads) {
      const C qi = to_compute<C>(q[key0 + i]), ki = to_compute<C>(k[key0 + i]);
      qs[i] = qi, ks[i] = ki, es[i] = exp_of(to_compute<C>(g[key0 + i]));
      if constexpr (OP == recurrence::rwkv6) bonus += qi * to_compute<C>(u[h * a.K + i]) * ki;
    }
    if constexpr (OP == recurrence::rwkv6) {
#pragma unroll
      for (int off = 16; off > 0; off /= 2) bonus += __shfl_xor_sync(0xffffffffu, bonus, off);
      if (tid % 32 == 0) bonus_part[buf][tid / 32] = bonus;
    }
    const C vj = active ? to_compute<C>(v[value0 + j]) : C(0);
    __syncthreads();  // qs, ks, es (and S's zeros)
    const bool last = tt + 1 == seq.T;
    C oj = C(0);
    for (int gi = 0; gi < t::kGroups; ++gi) {
      if (tt == 0 && h0) mbarrier::wait(&full[gi], 0);
      if (active)
        for (int r = first_row(gi) + part; r < first_row(gi + 1); r += tpc) {
          C s = S[r * width + j];
          if constexpr (OP == recurrence::rwkv6) oj += qs[r] * s;
          s = es[r] * s + ks[r] * vj;
          S[r * width + j] = s;
          if constexpr (OP == recurrence::gla) oj += qs[r] * s;
        }
      if (last && ht) store_group(gi);
    }
    if (active) partial[buf][part * width + j] = oj;
    __syncthreads();
    if (tid < width) {
      C sum = C(0);
      for (int p = 0; p < tpc; ++p) sum += partial[buf][p * width + tid];
      if constexpr (OP == recurrence::rwkv6) {
        C c_t = C(0);
#pragma unroll
        for (int w = 0; w < t::kThreads / 32; ++w) c_t += bonus_part[buf][w];
        sum += c_t * to_compute<C>(v[value0 + tid]);
      }
      o[value0 + tid] = to_storage<Elem>(scale * sum);
    }
  }
  if (seq.T == 0)  // an empty sequence of a packed batch: ht = h0, and h0's copies land
    for (int gi = 0; gi < t::kGroups; ++gi) {  // before the block leaves
      if (h0) mbarrier::wait(&full[gi], 0);
      if (ht) store_group(gi);
    }
  bulk::wait_stores_read();
#endif
}

// Whether the bulk kernel takes a decode: fp32 states (Elem fp32, or 16-bit with
// state_fp32), V a multiple of 4, h0 and ht 16-byte aligned, and the kernel compiled from
// sm_90 code: a binary with only sm_80's (its body empty) runs the register kernel, also
// where the driver compiles its compute_80 PTX for a newer GPU (binaryVersion 90,
// ptxVersion 80).
// Elem: fp32, bf16 or fp16 (fp32 compute).
template <recurrence OP, typename Elem>
bool decode_bulk_fits(const scan_args& a) {
  if (!(std::is_same_v<Elem, float> || a.state_fp32) || a.V % 4 != 0 || a.K > kMaxHeadSize)
    return false;
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (!aligned(a.h0) || !aligned(a.ht)) return false;
  static per_device compiled{};
  return runs_sm90_code(compiled, reinterpret_cast<const void*>(decode_bulk_kernel<OP, Elem>));
}

template <recurrence OP, typename Elem>
cudaError_t run_decode_bulk(const scan_args& a) {
  const int64_t cw = decode_bulk_columns(a.K, a.V);
  const dim3 grid(unsigned((a.V + cw - 1) / cw), unsigned(a.B * a.H));
  const int smem = int(a.K * cw * int64_t(sizeof(float)));  // ≤ kSlabBytes
  if (cudaError_t e =
          allow_shared_memory<decode_bulk_kernel<OP, Elem>>(decode_bulk_tiles::kSlabBytes))
    return e;
  decode_bulk_kernel<OP, Elem>
      <<<grid, decode_bulk_tiles::kThreads, smem, a.stream>>>(a, static_cast<int>(cw));
  return cudaGetLastError();
}

}  // namespace glabench::parallel_scan
