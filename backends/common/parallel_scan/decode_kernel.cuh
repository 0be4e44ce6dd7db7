// Decoding: the recurrence for one-token sequences (T = 1, or a packed batch of as many
// tokens as sequences), where a call's cost is reading h0 and writing ht, not its tokens.
// fp32 states mostly take the bulk-copy kernel (decode_bulk_kernel.cuh, faster on Hopper);
// this register kernel takes the rest (fp64 and 16-bit states, V not a multiple of 4,
// unaligned states, binaries without sm_90 code) and a backend's
// <BACKEND>_DECODE_REGISTERS=1.
// The kernel walks a sequence's tokens in a loop, so any length would be right; the launch
// sends it only one-token sequences.
// The chunked scan kernels stage tokens through shared memory and reduce over lane groups
// for every chunk; for one token that machinery costs more than the state's own traffic
// (B256 H16 D128: 32–37 % of the copy bandwidth). This kernel instead streams the state:
//
//   a block per (128 value columns, sequence·head), 8 warps; lane l of warp w owns four
//   columns of the tile and key rows w, w+8, …, so S's K×128 tile sits in registers, RPW
//   rows a thread. The four are 4l … 4l+3 (VEC: one 16-byte load or store a row for fp32
//   states, so a warp moves a whole 512-byte row at once) where V is a multiple of 4 and
//   the states are aligned to it; else l, l+32, l+64, l+96 (a coalesced 128-byte run per
//   warp and column). h0 is read and ht written with the streaming (evict-first) hints:
//   each byte is touched once.
//   Per token: S = e^{g} ⊙ S + kᵀv (gla: before o; rwkv6: after), o_j = scale Σ_i q_i S_ij
//   summed in the thread over its rows, then across the 8 warps in shared memory (two
//   buffers, one barrier a token); rwkv6 adds scale (Σ_i q_i u_i k_i) v_j.
//
// Every load of h0 is issued before the first use, so a thread keeps RPW·4 loads in flight
// and the SM some 100 KB. Gates are applied as e^{g} one token at a time, exactly as the
// recurrence reads (no rescaling, so no range limit). States are Elem, or fp32 where
// a.state_fp32 (State); the compute type is the scan kernels' (compute_t).
#pragma once

#include <cstdint>
#include <type_traits>

#include "decode_bulk_kernel.cuh"
#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::parallel_scan {

struct decode_tiles {
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  // Columns a lane: measured on the H200 at B64 and B256 H16 D128 bf16 (fp32 states),
  // strided, 4 moved 62–67 % of the copy bandwidth, 2 45–66 %, 1 40–50 %; 4 adjacent
  // (VEC) 71–75 % for gla, 60–63 % for rwkv6.
  static constexpr int kColumnsPerLane = 4;
  static constexpr int kColumns = 32 * kColumnsPerLane;
};

// Four consecutive states (VEC) as one vector access of 4·sizeof(State) bytes, streamed.
template <typename C, typename State>
__device__ __forceinline__ void load_four(const State* at, C (&x)[4]) {
  if constexpr (std::is_same_v<State, float>) {
    const float4 v = __ldcs(reinterpret_cast<const float4*>(at));
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
  } else if constexpr (std::is_same_v<State, double>) {
    const double2 lo = __ldcs(reinterpret_cast<const double2*>(at)),
                  hi = __ldcs(reinterpret_cast<const double2*>(at) + 1);
    x[0] = lo.x, x[1] = lo.y, x[2] = hi.x, x[3] = hi.y;
  } else {  // 16-bit states: 8 bytes
    const uint2 v = __ldcs(reinterpret_cast<const uint2*>(at));
    const State* e = reinterpret_cast<const State*>(&v);
#pragma unroll
    for (int c = 0; c < 4; ++c) x[c] = to_compute<C>(e[c]);
  }
}
template <typename State, typename C>
__device__ __forceinline__ void store_four(State* at, const C (&x)[4]) {
  if constexpr (std::is_same_v<State, float>) {
    __stcs(reinterpret_cast<float4*>(at), make_float4(x[0], x[1], x[2], x[3]));
  } else if constexpr (std::is_same_v<State, double>) {
    __stcs(reinterpret_cast<double2*>(at), make_double2(x[0], x[1]));
    __stcs(reinterpret_cast<double2*>(at) + 1, make_double2(x[2], x[3]));
  } else {
    uint2 v;
    State* e = reinterpret_cast<State*>(&v);
#pragma unroll
    for (int c = 0; c < 4; ++c) e[c] = to_storage<State>(x[c]);
    __stcs(reinterpret_cast<uint2*>(at), v);
  }
}

template <recurrence OP, typename Elem, typename State, int RPW, bool VEC>
__global__ void __launch_bounds__(decode_tiles::kThreads) decode_kernel(scan_args a) {
  using C = compute_t<Elem>;
  using t = decode_tiles;
  constexpr int CJ = t::kColumnsPerLane, kColumns = t::kColumns;
  __shared__ C partial[2][t::kWarps][kColumns];
  __shared__ C bonus_part[2][t::kWarps];

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t h = blockIdx.y % a.H;
  const sequence_span seq = sequence_of(a, blockIdx.y / a.H);
  const int64_t state0 = int64_t(blockIdx.y) * a.K * a.V;
  const int64_t col0 = int64_t(blockIdx.x) * kColumns;
  auto column = [&](int c) { return VEC ? col0 + CJ * lane + c : col0 + lane + 32 * c; };
  auto row = [&](int r) { return int64_t(warp + t::kWarps * r); };

  C S[RPW][CJ];
  {
    const State* h0 = static_cast<const State*>(a.h0);
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      if constexpr (VEC) {  // V a multiple of 4: the four columns are in or out together
        if (h0 && row(r) < a.K && column(0) < a.V)
          load_four(h0 + state0 + row(r) * a.V + column(0), S[r]);
        else
#pragma unroll
          for (int c = 0; c < CJ; ++c) S[r][c] = C(0);
      } else {
#pragma unroll
        for (int c = 0; c < CJ; ++c) S[r][c] = state_value<C>(h0, a, state0, row(r), column(c));
      }
    }
  }

  const Elem* q = static_cast<const Elem*>(a.q);
  const Elem* k = static_cast<const Elem*>(a.k);
  const Elem* v = static_cast<const Elem*>(a.v);
  const Elem* g = static_cast<const Elem*>(a.g);
  Elem* o = static_cast<Elem*>(a.o);
  const Elem* u = static_cast<const Elem*>(a.u);  // rwkv6: [H,K]
  const C scale = static_cast<C>(a.scale);

  for (int64_t tt = 0; tt < seq.T; ++tt) {
    const int64_t token = seq.bos + tt;
    const int64_t key0 = (token * a.H + h) * a.K, value0 = (token * a.H + h) * a.V;
    C vj[CJ], oj[CJ], bonus = C(0);
#pragma unroll
    for (int c = 0; c < CJ; ++c) {
      vj[c] = column(c) < a.V ? to_compute<C>(v[value0 + column(c)]) : C(0);
      oj[c] = C(0);
    }
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const bool in = row(r) < a.K;
      const C qi = in ? to_compute<C>(q[key0 + row(r)]) : C(0);
      const C ki = in ? to_compute<C>(k[key0 + row(r)]) : C(0);
      const C decay = in ? exp_of(to_compute<C>(g[key0 + row(r)])) : C(0);
      if constexpr (OP == recurrence::rwkv6) {
        bonus += in ? qi * to_compute<C>(u[h * a.K + row(r)]) * ki : C(0);
#pragma unroll
        for (int c = 0; c < CJ; ++c) oj[c] += qi * S[r][c];
      }
#pragma unroll
      for (int c = 0; c < CJ; ++c) S[r][c] = decay * S[r][c] + ki * vj[c];
      if constexpr (OP == recurrence::gla)
#pragma unroll
        for (int c = 0; c < CJ; ++c) oj[c] += qi * S[r][c];
    }
    const int buf = int(tt & 1);
#pragma unroll
    for (int c = 0; c < CJ; ++c) partial[buf][warp][column(c) - col0] = oj[c];
    // Every lane of a warp holds its rows' whole share of the bonus.
    if constexpr (OP == recurrence::rwkv6)
      if (lane == 0) bonus_part[buf][warp] = bonus;
    __syncthreads();
    if (threadIdx.x < kColumns) {
      const int64_t j = col0 + threadIdx.x;
      C sum = C(0), c_t = C(0);
#pragma unroll
      for (int w = 0; w < t::kWarps; ++w) sum += partial[buf][w][threadIdx.x];
      if constexpr (OP == recurrence::rwkv6) {
#pragma unroll
        for (int w = 0; w < t::kWarps; ++w) c_t += bonus_part[buf][w];
        if (j < a.V) sum += c_t * to_compute<C>(v[value0 + j]);
      }
      if (j < a.V) o[value0 + j] = to_storage<Elem>(scale * sum);
    }
    // The next token writes the other buffer; the one after this one's, only after every
    // thread passed the next barrier, by which time these reads are done.
  }

  if (a.ht) {
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      if constexpr (VEC) {
        if (row(r) < a.K && column(0) < a.V)
          store_four(static_cast<State*>(a.ht) + state0 + row(r) * a.V + column(0), S[r]);
      } else {
#pragma unroll
        for (int c = 0; c < CJ; ++c)
          if (row(r) < a.K && column(c) < a.V)
            store_state_value<Elem>(a.ht, a, state0 + row(r) * a.V + column(c), S[r][c]);
      }
    }
  }
}

// Whether the decode kernel takes a forward: sequences of one token (B·1, or a packed
// batch of as many tokens as sequences).
inline bool decodes(const scan_args& a) {
  return a.cu_seqlens ? a.T == a.B : a.T == 1;
}

template <recurrence OP, typename Elem, typename State, int RPW>
cudaError_t run_decode_with(const scan_args& a) {
  constexpr int kColumns = decode_tiles::kColumns;
  const dim3 grid(unsigned((a.V + kColumns - 1) / kColumns), unsigned(a.B * a.H));
  // VEC: whole vectors of four states, aligned to their size.
  auto aligned = [](const void* p) {
    return reinterpret_cast<uintptr_t>(p) % (4 * sizeof(State)) == 0;
  };
  if (a.V % 4 == 0 && aligned(a.h0) && aligned(a.ht))
    decode_kernel<OP, Elem, State, RPW, true><<<grid, decode_tiles::kThreads, 0, a.stream>>>(a);
  else
    decode_kernel<OP, Elem, State, RPW, false><<<grid, decode_tiles::kThreads, 0, a.stream>>>(a);
  return cudaGetLastError();
}

template <typename State>
struct state_tag {
  using type = State;
};

// fp32 states take the bulk kernel (decode_bulk_kernel.cuh) where it fits, unless
// `registers` (a backend's <BACKEND>_DECODE_REGISTERS=1, knobs.hpp); others this one, its
// rows a thread K/8 rounded up to 4, 8, 16 or 32 (K ≤ 256), its states Elem or fp32.
template <recurrence OP, typename Elem>
cudaError_t run_decode(const scan_args& a, bool registers = false) {
  if constexpr (std::is_same_v<compute_t<Elem>, float>)
    if (!registers && decode_bulk_fits<OP, Elem>(a)) return run_decode_bulk<OP, Elem>(a);
  const int64_t rows = (a.K + decode_tiles::kWarps - 1) / decode_tiles::kWarps;
  auto with_rows = [&](auto state) -> cudaError_t {
    using State = typename decltype(state)::type;
    if (rows <= 4) return run_decode_with<OP, Elem, State, 4>(a);
    if (rows <= 8) return run_decode_with<OP, Elem, State, 8>(a);
    if (rows <= 16) return run_decode_with<OP, Elem, State, 16>(a);
    return run_decode_with<OP, Elem, State, 32>(a);
  };
  if constexpr (!std::is_same_v<compute_t<Elem>, double>)
    if (a.state_fp32) return with_rows(state_tag<float>{});
  return with_rows(state_tag<Elem>{});
}

}  // namespace glabench::parallel_scan
