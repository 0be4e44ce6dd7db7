// Launches of the chunked kernels, instantiated for fp64, fp32 and bf16 (fp16 storage runs
// on the fp32 ones: fp16_storage.cu), and the workspace they carve. Every launch is checked.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "../common/device_attributes.hpp"
#include "../common/workspace_carver.hpp"
#include "backward_bf16_mma_grads.cuh"
#include "backward_bf16_mma_states.cuh"
#include "backward_fp_mma_grads.cuh"
#include "backward_fp_walks.cuh"
#include "backward_wmma.cuh"
#include "decode_kernel.cuh"
#include "forward_bf16_mma.cuh"
#include "forward_fp32_3xtf32.cuh"
#include "forward_fp64_dmma.cuh"
#include "forward_seed_reference.cuh"
#include "forward_wmma.cuh"
#include "launch.hpp"
#include "sequence_carry.cuh"

namespace glabench::chunked {
namespace {

int round_up(int x, int m) {
  return (x + m - 1) / m * m;
}

// f(S{}) for the storage dtype's element type S: the one dispatch from the host's storage
// enum to the kernels' templates.
// fp16 is not among them: its public entries widen it to fp32 first (fp16_storage.cu), and
// the sequence split refuses it (supports(); the split's entries below return
// cudaErrorNotSupported).
template <class F>
auto with_storage(storage dtype, F f) {
  switch (dtype) {
    case storage::fp64:
      return f(double{});
    case storage::fp32:
      return f(float{});
    default:  // bf16
      return f(__nv_bfloat16{});
  }
}

template <class Tr>
dims dims_of(const call& c) {
  dims d{};
  d.B = c.B;
  d.H = c.H;
  d.K = c.K;
  d.V = c.V;
  d.T = c.T;
  d.NT = static_cast<int>((c.T + kChunk - 1) / kChunk);
  d.Kp = round_up(c.K, Tr::BK);
  d.Vp = round_up(c.V, Tr::BV_out);
  d.NVs = d.Vp / Tr::BV;
  return d;
}

// The workspace is carved in 256-byte-aligned arrays, in order
// (../common/workspace_carver.hpp): the size queries walk the same plans with a null base.
using cuda_plugin::carver;

// An fp walk's sequence split (walk_plan.hpp) in its chunks, states in S and gate sums in
// fp64, for either width of fp32's walk block (fp_walk_slab).
template <class S>
size_t fp_split_workspace_bytes(int B, int64_t T, int H, int V) {
  return walk::split_workspace_bytes_either_width(B, T, H, V, walk_fp::sizes<S>::C, sizeof(S),
                                                  sizeof(double), walk_fp::first_pass_slab<S>);
}

template <class Tr>
size_t states_count(const dims& d) {
  return static_cast<size_t>(d.B) * d.H * (d.NT + 1) * d.Kp * d.Vp;
}

template <class Tr>
struct forward_plan {
  typename Tr::acc_t* states = nullptr;
  separate_workspace<Tr> sep{};
  forward_plan(carver& w, const dims& d, stages path) {
    if (path == stages::fused) {
      states = w.take<typename Tr::acc_t>(states_count<Tr>(d));
      return;
    }
    const size_t heads = static_cast<size_t>(d.B) * d.H, Tp = static_cast<size_t>(d.NT) * kChunk;
    sep.G = w.take<typename Tr::gate_t>(heads * Tp * d.Kp);
    sep.qg = w.take<typename Tr::op_t>(heads * Tp * d.Kp);
    sep.kg = w.take<typename Tr::op_t>(heads * Tp * d.Kp);
    sep.o_inter = w.take<typename Tr::acc_t>(heads * Tp * d.Vp);
    sep.A = w.take<typename Tr::acc_t>(heads * Tp * kChunk);
  }
};

template <class Tr>
struct backward_plan {
  typename Tr::acc_t *states, *dstates, *ypart;
  // bf16 only: the chunks the gradient walk leaves to the WMMA bodies (a list and a flag
  // per chunk, backward_bf16_mma_states.cuh), and the state walks' sequence split
  // (walk_plan.hpp).
  // The dS walk's pieces apart (dsplit) where both passes' are live at once: a
  // sequence-parallel rank's, over every segment, or the dS walk's beside the state walk
  // (call::pair); one after the other on a stream, the dS pass reuses the state pass's.
  int* leftover = nullptr;
  unsigned char* listed = nullptr;
  float *split = nullptr, *dsplit = nullptr;
  // fp32 and fp64 heads the walks can take (K ≤ 128): the state passes on the walks
  // (backward_fp_walks.cuh) and their splits, the state pass's and the dS walk's (side by
  // side: call::pair), carved last (fp_split_bytes each).
  using S = typename Tr::storage_t;
  void *fp_split = nullptr, *fp_dsplit = nullptr;
  size_t fp_split_bytes = 0;
  bool fp_walks = false;
  backward_plan(carver& w, const dims& d, bool sequence_rank = false)
      : states(w.take<typename Tr::acc_t>(states_count<Tr>(d))),
        dstates(w.take<typename Tr::acc_t>(states_count<Tr>(d))),
        ypart(w.take<typename Tr::acc_t>(static_cast<size_t>(d.B) * d.H * d.NT * d.NVs * d.Kp)) {
    if constexpr (!std::is_same_v<S, __nv_bfloat16>) {
      fp_walks = d.K <= walk_fp::sizes<S>::KP;
      if (!fp_walks) return;
      auto split_bytes = [&](int64_t T) {  // the forward's T and the reversed Tp
        return fp_split_workspace_bytes<S>(d.B, T, d.H, d.V);
      };
      fp_split_bytes =
          std::max(split_bytes(d.T), split_bytes(reversed::padded_length(d.T, kChunk)));
      fp_split = w.take<char>(fp_split_bytes);
      fp_dsplit = w.take<char>(fp_split_bytes);
    }
    if constexpr (std::is_same_v<S, __nv_bfloat16>) {
      // Every item of every chunk at most (chunk_listed_grads_kernel). The gradient walk's warps
      // take K in two 64-feature halves, the K slabs it leaves (more strong features than it
      // rewrites: strong_features.hpp).
      static_assert(Tr::BK == walk::KP / 2);
      leftover = w.take<int>(static_cast<size_t>(d.B) * d.H * d.NT * items_of<Tr>(d).total() + 1);
      listed = w.take<unsigned char>(static_cast<size_t>(d.B) * d.H * d.NT);
      const size_t pieces =
          walk::split_workspace_bytes(d.B, d.T, d.H, d.Vp, walk::C, 4, 4, walk::BV, sequence_rank) /
          sizeof(float);
      split = w.take<float>(pieces);
      dsplit = w.take<float>(pieces);  // a rank's, or the dS walk's beside the state walk's
    }
  }
};

// Shared-memory bytes of a layout struct L (carved from a null base).
template <class L, class... Args>
size_t smem_of(Args... args) {
  carve c{nullptr};
  L l(c, args...);
  (void)l;
  return c.used;
}

// Raises a kernel's dynamic shared-memory limit the first time a call needs more on the
// current device (the attribute is per device: a sequence split's ranks span several), not
// on every call: the timed calls then only launch.
cudaError_t allow_smem(const void* kernel, size_t smem) {
  static std::mutex guard;
  static std::map<std::pair<int, const void*>, size_t> allowed;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  std::lock_guard<std::mutex> lock(guard);
  size_t& have = allowed[{device, kernel}];
  if (smem <= std::max<size_t>(have, 48 * 1024)) return cudaSuccess;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)))
    return e;
  have = smem;
  return cudaSuccess;
}

template <class Kernel, class... Args>
cudaError_t launch(Kernel kernel, dim3 grid, size_t smem, cudaStream_t stream, Args... args) {
  if (cudaError_t e = allow_smem(reinterpret_cast<const void*>(kernel), smem)) return e;
  kernel<<<grid, kThreads, smem, stream>>>(args...);
  return cudaGetLastError();
}
// The same in clusters of `cluster` blocks along grid y.
template <class... Params, class... Args>
cudaError_t launch_clusters(void (*kernel)(Params...), dim3 grid, unsigned cluster, size_t smem,
                            cudaStream_t stream, Args... args) {
  if (cluster == 1) return launch(kernel, grid, smem, stream, args...);
  if (cudaError_t e = allow_smem(reinterpret_cast<const void*>(kernel), smem)) return e;
  cudaLaunchConfig_t config{};
  config.gridDim = grid, config.blockDim = dim3(kThreads), config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1, attribute.val.clusterDim.y = cluster,
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute, config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// The bf16 chunk walk (forward_bf16_mma.cuh) takes heads with K ≤ 128 whose rows are whole
// 8-byte vectors at 8-byte-aligned addresses (K and V multiples of 4): loads of 16 bytes
// where the rows are whole 16-byte vectors, else of 8 (`narrow`). The other shapes take
// the WMMA kernels (forward_wmma.cuh).
bool rows_aligned(const call& c, int elems, uintptr_t bytes) {
  auto aligned = [&](const void* p) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
  return c.K % elems == 0 && c.V % elems == 0 && aligned(c.q) && aligned(c.k) && aligned(c.v) &&
         aligned(c.g) && aligned(c.o) && aligned(c.d_o);
}
// The head sizes the bf16 walk takes, whatever the pointers.
bool walk_shape_fits(int K, int V) {
  return K <= walk::KP && K % 4 == 0 && V % 4 == 0;
}
bool walk_fits(const call& c) {
  // A state's column pairs: 4 bytes in bf16, 8 in fp32.
  const uintptr_t pair = c.state_fp32 ? 8 : 4;
  auto aligned = [&](const void* p) { return reinterpret_cast<uintptr_t>(p) % pair == 0; };
  return walk_shape_fits(c.K, c.V) && c.T > 0 && rows_aligned(c, 4, 8) && aligned(c.h0) &&
         aligned(c.ht) && aligned(c.dht) && aligned(c.dh0);
}
// The bf16 walks take the call: the fused path on a head that fits.
bool on_walks(const call& c) {
  return c.path == stages::fused && walk_fits(c);
}

// The gradient walk (backward_bf16_mma_grads.cuh) reads S_n and dS_n as rows of exactly 128 columns
// (Vp = 128: V ≤ 128) and stores the gradients as bf16 pairs (4-byte aligned).
bool grads_walk_fits(const call& c, const dims& d) {
  auto aligned4 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; };
  return d.Vp == walk::KP && aligned4(c.dq) && aligned4(c.dk) && aligned4(c.dv) && aligned4(c.dg);
}

// The forward's tensors and head sizes of a call, into a walk's arguments A: the tokens'
// in storage In, the states in S.
template <class S, class In = S, class A>
void take_forward_tensors(A& a, const call& c) {
  a.q = static_cast<const In*>(c.q), a.k = static_cast<const In*>(c.k);
  a.v = static_cast<const In*>(c.v), a.g = static_cast<const In*>(c.g);
  a.h0 = static_cast<const S*>(c.h0);
  a.o = static_cast<In*>(c.o), a.ht = static_cast<S*>(c.ht);
  a.H = c.H, a.K = c.K, a.V = c.V;
}

walk::args walk_args_of(const call& c) {
  walk::args a{};
  take_forward_tensors<__nv_bfloat16>(a, c);
  a.state_fp32 = c.state_fp32;
  a.T = c.T;
  a.NT = static_cast<int>((c.T + walk::C - 1) / walk::C);
  a.scale = static_cast<float>(c.scale);
  a.segs = 1;
  a.dfirst_seg = 1;
  a.narrow = !rows_aligned(c, 8, 16);
  a.u = static_cast<const __nv_bfloat16*>(c.u);
  return a;
}

// A walk kernel with `threads` threads and `smem` bytes of shared memory; the walks of
// walk::THREADS threads, with the forward's layout unless given.
template <class Kernel, class... Args>
cudaError_t launch_walk_kernel_threads(Kernel kernel, dim3 grid, int threads, size_t smem,
                                       cudaStream_t stream, Args... args) {
  if (cudaError_t e = allow_smem(reinterpret_cast<const void*>(kernel), smem)) return e;
  kernel<<<grid, threads, smem, stream>>>(args...);
  return cudaGetLastError();
}
template <class Kernel, class... Args>
cudaError_t launch_walk_kernel_smem(Kernel kernel, dim3 grid, size_t smem, cudaStream_t stream,
                                    Args... args) {
  return launch_walk_kernel_threads(kernel, grid, walk::THREADS, smem, stream, args...);
}
template <class Kernel, class... Args>
cudaError_t launch_walk_kernel(Kernel kernel, dim3 grid, cudaStream_t stream, Args... args) {
  return launch_walk_kernel_smem(kernel, grid, walk::layout::bytes, stream, args...);
}

// The sequence split of a walk over `cols` columns in chunks of `chunk` tokens, into the
// walk's arguments A (the bf16 walk's, whose first pass takes one wave, or the fp walk's,
// whole waves: walk::pieces_rule), with its pieces' arrays at `base` (walk::split_workspace_bytes
// for the same cols, chunk, slabs and rule): the walk's grid, (V blocks of `walk_slab` columns,
// heads, segments), and the first pass's pieces (every segment's for a sequence-parallel
// rank). The pieces' states come first, in A's state type and tiles of walk::BV columns,
// then their gate sums.
struct walk_split {
  dim3 grid;
  unsigned pieces;
};
template <class A>
walk_split plan_walk_split(A& a, const call& c, int cols, void* base, int chunk = walk::C,
                           int first_slab = walk::BV, bool every_segment = false, int sm_share = 1,
                           int walk_slab = walk::BV) {
  constexpr walk::pieces_rule rule =
      std::is_same_v<A, walk::args> ? walk::pieces_rule::one_wave : walk::fp_walk_pieces;
  // The SM count is asked once per device (0 if unreadable: no split), not every call
  // (../common/device_attributes.hpp); `sm_share` walks run side by side on them.
  const walk::plan plan = walk::plan_launch(c.B, c.H, cols, c.T, cuda_plugin::sm_count() / sm_share,
                                            chunk, first_slab, walk_slab, rule);
  a.segs = plan.segs, a.seg_chunks = plan.seg_chunks, a.subs = plan.subs,
  a.sub_chunks = plan.sub_chunks;
  const size_t heads = static_cast<size_t>(c.B) * c.H, slabs = (cols + walk::BV - 1) / walk::BV;
  const unsigned pieces = static_cast<unsigned>(plan.pieces(every_segment));
  a.dstate = static_cast<decltype(a.dstate)>(base);
  a.dgate =
      reinterpret_cast<decltype(a.dgate)>(a.dstate + pieces * heads * slabs * walk::KP * walk::BV);
  return {dim3(static_cast<unsigned>((cols + walk_slab - 1) / walk_slab),
               static_cast<unsigned>(heads), static_cast<unsigned>(a.segs)),
          pieces};
}

// A sequence-parallel rank's first pass ran in phase 1 (launch_contribution).
cudaError_t launch_walk(const call& c) {
  walk::args a = walk_args_of(c);
  const auto [grid, pieces] =
      plan_walk_split(a, c, c.V, c.workspace, walk::C, walk::BV, c.sequence_rank);
  if (pieces > 0 && !c.sequence_rank)
    if (cudaError_t e = launch_walk_kernel(a.narrow ? walk::chunk_walk_segment_states_kernel<true>
                                                    : walk::chunk_walk_segment_states_kernel<false>,
                                           dim3(grid.x, grid.y, pieces), c.stream, a))
      return e;
  const auto kernel = a.u ? (a.narrow ? walk::chunk_walk_bf16_kernel<true, true>
                                      : walk::chunk_walk_bf16_kernel<false, true>)
                          : (a.narrow ? walk::chunk_walk_bf16_kernel<true, false>
                                      : walk::chunk_walk_bf16_kernel<false, false>);
  return launch_walk_kernel(kernel, grid, c.stream, a);
}

// The fp walks (forward_fp64_dmma.cuh, forward_fp32_3xtf32.cuh) take heads with
// K ≤ 128 whose rows are whole 16-byte vectors at 16-byte-aligned addresses, as the bf16
// walk does (In: the tokens' storage, fp16 for fp32's walk read in fp16).
template <class S, class In = S>
bool fp_walk_fits(const call& c) {
  constexpr int vec = 16 / sizeof(In);
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return c.K <= walk_fp::sizes<S>::KP && c.K % vec == 0 && c.V % vec == 0 && c.T > 0 &&
         aligned(c.q) && aligned(c.k) && aligned(c.v) && aligned(c.g) && aligned(c.o);
}

// The V columns of an fp walk's block: fp64's a slab; fp32's by walk::fp32_walk_slab.
template <class S>
int fp_walk_slab(const call& c) {
  if constexpr (!std::is_same_v<S, float>)
    return walk_fp::sizes<S>::BV;
  else
    return walk::fp32_walk_slab(c.B, c.H, c.V, c.T, cuda_plugin::sm_count(), walk_fp::sizes<S>::C,
                                walk_fp::kFirstPassCols, c.fp32_walk_cols);
}

// `slots`: the backward's state passes (backward_fp_walks.cuh); none in the forward. In:
// the tokens' storage (fp16 on fp32's pipelined walk).
template <class S, class In = S>
cudaError_t launch_fp_walk(const call& c, walk_fp::state_slots<S> slots = {},
                           const walk_fp::reversal<S>* rev = nullptr) {
  using Z = walk_fp::sizes<S>;
  walk_fp::args<S, In> a{};
  take_forward_tensors<S, In>(a, c);
  a.slots = slots;
  a.slots.reversed = rev != nullptr;  // the dS walk's slots, from the last chunk back
  if (rev) a.rev = *rev;
  a.T_len = c.T;
  a.NT = static_cast<int>((c.T + Z::C - 1) / Z::C);
  a.scale = static_cast<S>(c.scale);
  static_assert(Z::KP == walk::KP && Z::BV == walk::BV, "the bf16 walk's state tiles");
  constexpr int first_slab = walk_fp::first_pass_slab<S>;
  const int slab = fp_walk_slab<S>(c);
  const auto [grid, pieces] =
      plan_walk_split(a, c, c.V, c.workspace, Z::C, first_slab, false, 1, slab);
  if constexpr (std::is_same_v<S, float>) {
    // fp32: the pipelined walk (forward_fp32_3xtf32.cuh); its first pass likewise, a block
    // 128 columns of V.
    using F = walk_fp::pipe_sizes_of<first_slab>;
    const dim3 first_pass((c.V + first_slab - 1) / first_slab, grid.y, pieces);
    if (pieces > 0)
      if (cudaError_t e = launch_walk_kernel_threads(
              rev ? walk_fp::chunk_walk_fp32_pipelined_states_kernel<true, In>
                  : walk_fp::chunk_walk_fp32_pipelined_states_kernel<false, In>,
              first_pass, F::THREADS, walk_fp::pipe_layout_of<F>::bytes, c.stream, a))
        return e;
    auto walk_of = [&, grid = grid](auto cols) {  // a copy: C++17 captures no binding
      constexpr int kCols = decltype(cols)::value;
      using W = walk_fp::pipe_sizes_of<kCols>;
      return launch_walk_kernel_threads(
          rev            ? walk_fp::chunk_walk_fp32_pipelined_kernel<kCols, true, true, In>
          : slots.states ? walk_fp::chunk_walk_fp32_pipelined_kernel<kCols, true, false, In>
                         : walk_fp::chunk_walk_fp32_pipelined_kernel<kCols, false, false, In>,
          grid, W::THREADS, walk_fp::pipe_layout_of<W>::bytes, c.stream, a);
    };
    return slab == first_slab ? walk_of(std::integral_constant<int, first_slab>{})
                              : walk_of(std::integral_constant<int, walk::BV>{});
  } else {
    // fp64: the pipelined walk (forward_fp64_dmma.cuh); its first pass likewise.
    static_assert(std::is_same_v<In, S>, "fp64 in its own storage");
    if (pieces > 0)
      if (cudaError_t e = launch_walk_kernel_threads(
              rev ? walk_fp::chunk_walk_fp64_pipelined_states_kernel<true>
                  : walk_fp::chunk_walk_fp64_pipelined_states_kernel<false>,
              dim3(grid.x, grid.y, pieces), walk_fp::pipe64_sizes::THREADS,
              walk_fp::pipe64_layout::bytes, c.stream, a))
        return e;
    return launch_walk_kernel_threads(
        rev            ? walk_fp::chunk_walk_fp64_pipelined_kernel<true, true>
        : slots.states ? walk_fp::chunk_walk_fp64_pipelined_kernel<true>
                       : walk_fp::chunk_walk_fp64_pipelined_kernel<false>,
        grid, walk_fp::pipe64_sizes::THREADS, walk_fp::pipe64_layout::bytes, c.stream, a);
  }
}

template <class S>
tensors<S> tensors_of(const call& c) {
  auto in = [](const void* p) { return static_cast<const S*>(p); };
  auto out = [](void* p) { return static_cast<S*>(p); };
  return {in(c.q),   in(c.k),   in(c.v),   in(c.g),   in(c.h0),  in(c.d_o),  in(c.dht),   out(c.o),
          out(c.ht), out(c.dq), out(c.dk), out(c.dv), out(c.dg), out(c.dh0), c.state_fp32};
}

// The backward's state and dS walks (backward_bf16_mma_states.cuh) into its workspace arrays.
// The first passes of the state and dS walks, each into its pieces' arrays, with `a` planned
// on them (plan_walk_split); `every_segment` for a sequence-parallel rank's phase 1.
cudaError_t launch_state_pieces(const walk::args& a, dim3 grid, unsigned pieces, cudaStream_t s) {
  if (pieces == 0) return cudaSuccess;
  return launch_walk_kernel(a.narrow ? walk::chunk_walk_segment_states_kernel<true>
                                     : walk::chunk_walk_segment_states_kernel<false>,
                            dim3(grid.x, grid.y, pieces), s, a);
}
cudaError_t launch_dstate_pieces(const walk::args& a, dim3 grid, unsigned pieces,
                                 const __nv_bfloat16* d_o, cudaStream_t s) {
  if (pieces == 0) return cudaSuccess;
  return launch_walk_kernel(a.narrow ? walk::chunk_walk_segment_dstates_kernel<true>
                                     : walk::chunk_walk_segment_dstates_kernel<false>,
                            dim3(grid.x, grid.y, pieces), s, a, d_o);
}

cudaError_t launch_states_walk(const walk::args& a, dim3 grid, const walk::state_arrays& w,
                               cudaStream_t stream) {
  return launch_walk_kernel(
      a.narrow ? walk::chunk_walk_states_kernel<true> : walk::chunk_walk_states_kernel<false>, grid,
      stream, a, w);
}

template <bool kY>
cudaError_t launch_dstates_walk(const walk::args& a, dim3 grid, const walk::state_arrays& w,
                                const call& c, cudaStream_t stream) {
  return launch_walk_kernel(a.narrow ? walk::chunk_walk_dstates_kernel<true, kY>
                                     : walk::chunk_walk_dstates_kernel<false, kY>,
                            grid, stream, a, w, static_cast<const __nv_bfloat16*>(c.d_o), c.dht,
                            c.dh0);
}

// Two parts of the backward side by side (call::pair: the state and dS walks, the listed
// items and the gradient walk): `on_pair`'s launches on c.pair.stream, forked from c.stream,
// then (unless they failed) `on_main`'s on c.stream; c.pair.stream joined back whatever
// happened.
template <class OnPair, class OnMain>
cudaError_t side_by_side(const call& c, OnPair&& on_pair, OnMain&& on_main) {
  if (cudaError_t e = cudaEventRecord(c.pair.fork, c.stream)) return e;
  if (cudaError_t e = cudaStreamWaitEvent(c.pair.stream, c.pair.fork, 0)) return e;
  cudaError_t failed = on_pair();
  if (!failed) failed = on_main();
  if (cudaError_t e = cudaEventRecord(c.pair.join, c.pair.stream)) return e;
  if (cudaError_t e = cudaStreamWaitEvent(c.stream, c.pair.join, 0)) return e;
  return failed;
}

// The bf16 state walk and dS walk side by side (the gradient walk sums Y_n, so the dS walk
// need not follow the state walk), each planned for half the SMs: the state walk on
// c.stream, the dS walk on c.pair.stream.
template <class Tr>
cudaError_t launch_state_walks_paired(const call& c, const dims& d, const backward_plan<Tr>& p,
                                      walk::state_arrays w) {
  walk::args a = walk_args_of(c), ad = a;
  const walk_split plan = plan_walk_split(a, c, d.Vp, p.split, walk::C, walk::BV, false, 2);
  plan_walk_split(ad, c, d.Vp, p.dsplit, walk::C, walk::BV, false, 2);
  const dim3 grid = plan.grid;
  const unsigned pieces = plan.pieces;
  auto dstates = [&] {
    if (c.walk_waits)  // the dS pass reads q and do
      if (cudaError_t e = cudaStreamWaitEvent(c.pair.stream, c.walk_waits, 0)) return e;
    if (cudaError_t e = launch_dstate_pieces(
            ad, grid, pieces, static_cast<const __nv_bfloat16*>(c.d_o), c.pair.stream))
      return e;
    return launch_dstates_walk<false>(ad, grid, w, c, c.pair.stream);
  };
  auto states = [&] {
    if (cudaError_t e = launch_state_pieces(a, grid, pieces, c.stream)) return e;
    return launch_states_walk(a, grid, w, c.stream);
  };
  return side_by_side(c, dstates, states);
}

// kY: the dS walk also sums Y_n per V slab (the WMMA kernels' ypart), after the state walk.
template <class Tr>
cudaError_t launch_backward_walks(const call& c, const dims& d, const backward_plan<Tr>& p,
                                  bool kY) {
  using bf16 = __nv_bfloat16;
  const bool rank = c.sequence_rank;
  walk::state_arrays w{p.states, p.dstates, p.ypart, d.NT, d.Kp, d.Vp, p.leftover, p.listed};
  w.dv_items = items_of<Tr>(d).dv, w.k_items = items_of<Tr>(d).k;
  if (cudaError_t e = cudaMemsetAsync(p.leftover, 0, sizeof(int), c.stream)) return e;
  if (!rank && !kY && c.pair.stream) return launch_state_walks_paired(c, d, p, w);
  walk::args a = walk_args_of(c);
  const auto [grid, pieces] = plan_walk_split(a, c, d.Vp, p.split, walk::C, walk::BV, rank);
  const bf16* d_o = static_cast<const bf16*>(c.d_o);
  // Each pass's pieces, then its walk; the dS pass reuses the pieces' arrays. A
  // sequence-parallel rank's pieces are phase 1's, the dS pass's in arrays of their own.
  if (!rank)
    if (cudaError_t e = launch_state_pieces(a, grid, pieces, c.stream)) return e;
  if (cudaError_t e = launch_states_walk(a, grid, w, c.stream)) return e;
  if (c.walk_waits)  // the dS pass reads q and do
    if (cudaError_t e = cudaStreamWaitEvent(c.stream, c.walk_waits, 0)) return e;
  if (rank) {
    plan_walk_split(a, c, d.Vp, p.dsplit, walk::C, walk::BV, true);
    a.dfirst_seg = 0;
  } else if (cudaError_t e = launch_dstate_pieces(a, grid, pieces, d_o, c.stream)) {
    return e;
  }
  return kY ? launch_dstates_walk<true>(a, grid, w, c, c.stream)
            : launch_dstates_walk<false>(a, grid, w, c, c.stream);
}

// The gradient walk (backward_bf16_mma_grads.cuh) for heads the state walks took with V ≤ 128,
// and the chunks the state walk listed (strong_features.hpp) on the WMMA bodies in a grid of
// their own (backward_wmma.cuh's chunk_listed_grads_kernel, a block an SM at most; an empty
// list returns at once): on c.pair.stream beside the walk where the call has one, else first.
template <class Tr>
cudaError_t launch_grads_walk(const call& c, const dims& d, const backward_plan<Tr>& p) {
  using bf16 = __nv_bfloat16;
  walk::grad_args w{};
  w.d_o = static_cast<const bf16*>(c.d_o);
  w.dq = static_cast<bf16*>(c.dq), w.dk = static_cast<bf16*>(c.dk);
  w.dv = static_cast<bf16*>(c.dv), w.dg = static_cast<bf16*>(c.dg);
  w.states = p.states, w.dstates = p.dstates;
  w.Kp = d.Kp, w.Vp = d.Vp, w.listed = p.listed;
  const int64_t chunks = static_cast<int64_t>(d.NT) * d.B * d.H;
  const int64_t items = chunks * items_of<Tr>(d).total();
  const int sms = cuda_plugin::sm_count();
  const unsigned listed_blocks = static_cast<unsigned>(std::min<int64_t>(items, std::max(sms, 1)));
  const size_t bodies_smem = std::max(smem_of<outputs_smem<Tr>>(), smem_of<grads_smem<Tr>>());
  auto listed = [&](cudaStream_t s) {
    return launch(chunk_listed_grads_kernel<bf16>, dim3(listed_blocks), bodies_smem, s,
                  tensors_of<bf16>(c), d, static_cast<const float*>(p.states),
                  static_cast<const float*>(p.dstates), c.scale,
                  static_cast<const int*>(p.leftover));
  };
  const walk::args a = walk_args_of(c);
  auto walk = [&] {
    return launch_walk_kernel_smem(
        a.narrow ? walk::chunk_walk_grads_kernel<true> : walk::chunk_walk_grads_kernel<false>,
        dim3(static_cast<unsigned>(chunks)), walk::grads_layout::bytes, c.stream, a, w);
  };
  if (c.pair.stream)
    return side_by_side(
        c, [&] { return listed(c.pair.stream); }, walk);
  if (cudaError_t e = listed(c.stream)) return e;
  return walk();
}

template <class S>
cudaError_t forward(const call& c) {
  if (decodes(c)) return launch_decode(c);
  using Tr = traits<S>;
  const dims d = dims_of<Tr>(c);
  const tensors<S> x = tensors_of<S>(c);
  carver w{static_cast<char*>(c.workspace)};
  if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    if (on_walks(c)) return launch_walk(c);
  } else {
    if (c.path == stages::fused && fp_walk_fits<S>(c)) return launch_fp_walk<S>(c);
  }
  const forward_plan<Tr> p(w, d, c.path);
  const unsigned heads = static_cast<unsigned>(d.B * d.H);
  const unsigned nt = static_cast<unsigned>(d.NT), nk = d.Kp / Tr::BK, nv = d.NVs;
  if (c.path == stages::fused) {
    if (cudaError_t e = launch(chunk_states_kernel<S>, dim3(nk, nv, heads),
                               smem_of<walk_smem<Tr>>(), c.stream, x, d, p.states))
      return e;
    return launch(chunk_outputs_kernel<S>, dim3(nt, d.Vp / Tr::BV_out, heads),
                  smem_of<outputs_smem<Tr>>(), c.stream, x, d,
                  static_cast<const typename Tr::acc_t*>(p.states), c.scale);
  }
  if (cudaError_t e = launch(decay_cumsum_kernel<S>, dim3(nt, nk, heads), 0, c.stream, x, d, p.sep))
    return e;
  const size_t prep_smem = [] {
    carve k{nullptr};
    k.take<typename Tr::acc_t>(kChunk * ld_of<typename Tr::acc_t>(Tr::BK));
    k.take<typename Tr::acc_t>(kChunk * ld_of<typename Tr::acc_t>(Tr::BK));
    k.take<typename Tr::gate_t>(kChunk * ld_of<typename Tr::acc_t>(Tr::BK));
    k.take<typename Tr::op_t>(kChunk * ld_of<typename Tr::op_t>(Tr::BK));
    return k.used;
  }();
  if (cudaError_t e =
          launch(prepare_qg_kg_kernel<S>, dim3(nt, nk, heads), prep_smem, c.stream, x, d, p.sep))
    return e;
  if (cudaError_t e = launch(fused_chunk_gla_fwd_kernel<S>, dim3(nv, heads),
                             smem_of<state_pass_smem<Tr>>(d.Kp), c.stream, x, d, p.sep))
    return e;
  if (cudaError_t e = launch(fwd_inner_chunk_kernel<S>, dim3(nt, heads), smem_of<scores_smem<Tr>>(),
                             c.stream, x, d, p.sep))
    return e;
  const size_t combine_smem = [] {
    carve k{nullptr};
    k.take<typename Tr::op_t>(kChunk * ld_of<typename Tr::op_t>(kChunk));
    k.take<typename Tr::op_t>(kChunk * ld_of<typename Tr::op_t>(Tr::BV));
    k.take<typename Tr::acc_t>(kChunk * ld_of<typename Tr::acc_t>(Tr::BV));
    return k.used;
  }();
  return launch(combine_kernel<S>, dim3(nt, nv, heads), combine_smem, c.stream, x, d, p.sep,
                c.scale);
}

// The fp32 and fp64 backward's state passes on the walks (backward_fp_walks.cuh): heads the
// forward walk takes whose dv rows are whole 16-byte vectors too (In as fp_walk_fits').
template <class S, class In = S>
bool fp_backward_walks_fit(const call& c) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return c.path == stages::fused && fp_walk_fits<S, In>(c) && aligned(c.dv) && aligned(c.d_o) &&
         aligned(c.dq) && aligned(c.dk) && aligned(c.dg);
}

// The dS walk on the tokens reversed (q′ = k, k′ = q, v′ = scale·do) into p.dstates, with
// dv, then dh0 = e^{g_0} ⊙ its final state; on `stream`.
template <class S, class In, class Tr>
cudaError_t launch_fp_dstates_walk(const call& c, const dims& d, const backward_plan<Tr>& p,
                                   void* split, cudaStream_t stream) {
  call rev = c;
  rev.T = reversed::padded_length(c.T, kChunk), rev.scale = 1.0;
  rev.q = c.k, rev.k = c.q, rev.v = c.d_o, rev.h0 = c.dht;
  rev.o = c.dv, rev.ht = c.dh0, rev.workspace = split, rev.stream = stream;
  const walk_fp::reversal<S> backwards{c.T, static_cast<S>(c.scale)};
  if (cudaError_t e = launch_fp_walk<S, In>(rev, {p.dstates, d.NT, d.Kp, d.Vp}, &backwards))
    return e;
  if (!c.dh0) return cudaSuccess;
  const fp_backward::dh0_factors<S, In> u{
      static_cast<const In*>(c.g), static_cast<S*>(c.dh0), c.H, c.K, c.V, c.T};
  const int64_t rows = int64_t{c.B} * c.H * c.K;
  fp_backward::dh0_factors_kernel<S, In>
      <<<static_cast<unsigned>(std::min<int64_t>(rows, 16 * 1024)), 128, 0, stream>>>(u, rows);
  return cudaGetLastError();
}

// Fills p.states with S_n (the state pass, outputs off) and p.dstates with R_n, and writes
// dv and dh0. With call::pair (not a sequence rank) the dS walk runs on its stream beside
// the state pass, each planned for the whole GPU (half the SMs each: B2 T16384 fp32 +14 %,
// H200); else one after the other.
template <class S, class In, class Tr>
cudaError_t launch_fp_backward_walks(const call& c, const dims& d, const backward_plan<Tr>& p) {
  call states = c;
  states.o = nullptr, states.ht = nullptr, states.workspace = p.fp_split;
  const walk_fp::state_slots<S> s{p.states, d.NT, d.Kp, d.Vp};
  if (!c.pair.stream || c.sequence_rank) {
    if (cudaError_t e = launch_fp_walk<S, In>(states, s)) return e;
    return launch_fp_dstates_walk<S, In>(c, d, p, p.fp_split, c.stream);
  }
  return side_by_side(
      c, [&] { return launch_fp_dstates_walk<S, In>(c, d, p, p.fp_dsplit, c.pair.stream); },
      [&] { return launch_fp_walk<S, In>(states, s); });
}

// The fp32 and fp64 backward on the walks: their state passes, then dq, dk and dg
// (backward_fp_mma_grads.cuh). In: the tokens' storage (fp16 on fp32's).
template <class S, class In = S>
cudaError_t launch_fp_backward(const call& c, const dims& d, const backward_plan<traits<S>>& p) {
  if (cudaError_t e = launch_fp_backward_walks<S, In>(c, d, p)) return e;
  // A chunk's K slabs in clusters that share dA, where the kernel has sm_90 code: fp64's
  // four slabs in one (at two blocks an SM; fwd+bwd −1.8 %, H100), fp32's in pairs.
  static cuda_plugin::per_device sm90{};
  const bool sm90_code = cuda_plugin::runs_sm90_code(
      sm90, reinterpret_cast<const void*>(fp_grads::chunk_fp_grads_kernel<S, 2, In>));
  constexpr unsigned kWide = sizeof(S) == 8 ? 4 : 2;
  const unsigned nk = d.Kp / traits<S>::BK;
  const unsigned cluster = !sm90_code || nk % 2 ? 1 : nk % kWide == 0 ? kWide : 2;
  auto kernel = cluster == kWide ? fp_grads::chunk_fp_grads_kernel<S, kWide, In>
                : cluster == 2   ? fp_grads::chunk_fp_grads_kernel<S, 2, In>
                                 : fp_grads::chunk_fp_grads_kernel<S, 1, In>;
  using acc_t = typename traits<S>::acc_t;
  return launch_clusters(
      kernel, dim3(static_cast<unsigned>(d.NT), nk, static_cast<unsigned>(d.B * d.H)), cluster,
      fp_grads::layout<S>::bytes, c.stream, tensors_of<In>(c), d,
      static_cast<const acc_t*>(p.states), static_cast<const acc_t*>(p.dstates), c.scale);
}

template <class S>
cudaError_t backward(const call& c) {
  using Tr = traits<S>;
  using acc_t = typename Tr::acc_t;
  const dims d = dims_of<Tr>(c);
  const tensors<S> x = tensors_of<S>(c);
  carver w{static_cast<char*>(c.workspace)};
  const backward_plan<Tr> p(w, d, c.sequence_rank);
  const unsigned heads = static_cast<unsigned>(d.B * d.H);
  const unsigned nt = static_cast<unsigned>(d.NT), nk = d.Kp / Tr::BK, nv = d.NVs;
  bool walked = false;
  if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    if (on_walks(c)) {
      const bool grads_walk = grads_walk_fits(c, d);  // else WMMA, which reads the dS walk's Y
      if (cudaError_t e = launch_backward_walks(c, d, p, !grads_walk)) return e;
      walked = true;
      if (grads_walk) return launch_grads_walk(c, d, p);
    }
  } else if (fp_backward_walks_fit<S>(c)) {
    return launch_fp_backward<S>(c, d, p);
  }
  if (!walked) {
    if (cudaError_t e = launch(chunk_states_kernel<S>, dim3(nk, nv, heads),
                               smem_of<walk_smem<Tr>>(), c.stream, x, d, p.states))
      return e;
    if (cudaError_t e =
            launch(chunk_dstates_kernel<S>, dim3(nk, nv, heads), smem_of<walk_smem<Tr>>(), c.stream,
                   x, d, static_cast<const acc_t*>(p.states), p.dstates, p.ypart, c.scale))
      return e;
  }
  if (cudaError_t e = launch(chunk_dv_kernel<S>, dim3(nt, d.Vp / Tr::BV_out, heads),
                             smem_of<outputs_smem<Tr>>(), c.stream, x, d,
                             static_cast<const acc_t*>(p.dstates), c.scale))
    return e;
  return launch(chunk_dq_dk_dg_kernel<S>, dim3(nt, nk, heads), smem_of<grads_smem<Tr>>(), c.stream,
                x, d, static_cast<const acc_t*>(p.states), static_cast<const acc_t*>(p.dstates),
                static_cast<const acc_t*>(p.ypart), c.scale);
}

template <class S>
size_t forward_bytes(stages path, int B, int64_t T, int H, int K, int V) {
  call c{};
  c.B = B, c.T = T, c.H = H, c.K = K, c.V = V;
  const dims d = dims_of<traits<S>>(c);
  carver w{nullptr};
  forward_plan<traits<S>> p(w, d, path);
  if (path != stages::fused) return w.used;
  // The walk's sequence split, or the two kernels for misaligned rows.
  if constexpr (std::is_same_v<S, __nv_bfloat16>)
    return std::max(w.used, walk::split_workspace_bytes(B, T, H, V));
  else
    return std::max(w.used, fp_split_workspace_bytes<S>(B, T, H, V));
}

template <class S>
size_t backward_bytes(int B, int64_t T, int H, int K, int V) {
  call c{};
  c.B = B, c.T = T, c.H = H, c.K = K, c.V = V;
  const dims d = dims_of<traits<S>>(c);
  carver w{nullptr};
  backward_plan<traits<S>> p(w, d);
  return w.used;
}

// A call's workspace for any T' ≤ T: its arrays grow with T, and its split's pieces are at
// most walk::kMostPieces whatever T' is (walk_plan.hpp).
template <class S>
size_t any_length_bytes(stages path, bool backward, int64_t T, int H, int K, int V) {
  call c{};
  c.B = 1, c.T = T, c.H = H, c.K = K, c.V = V;
  const dims d = dims_of<traits<S>>(c);
  carver w{nullptr};
  const bool bf16 = std::is_same_v<S, __nv_bfloat16>;
  const size_t pieces =
      bf16 ? walk::pieces_workspace_bytes(walk::kMostPieces, 1, H, backward ? d.Vp : V)
           : walk::pieces_workspace_bytes(walk::kMostPieces, 1, H, V, sizeof(S), sizeof(double));
  if (backward) {
    backward_plan<traits<S>> p(w, d);
    if constexpr (std::is_same_v<S, __nv_bfloat16>)  // the state and dS walks' pieces
      return w.used - 2 * walk::split_workspace_bytes(1, T, H, d.Vp) +
             2 * (pieces + carver::kAlign);
    // The fp walks' split (carved last) for any T' ≤ T: a plan's pieces do not grow with T.
    return w.used - 2 * p.fp_split_bytes + (p.fp_walks ? 2 * (pieces + carver::kAlign) : 0);
  }
  forward_plan<traits<S>> p(w, d, path);
  return std::max(w.used, pieces + carver::kAlign);
}

}  // namespace

// fp16 storage sizes its fp32 copies before the fp32 call's own workspace.
size_t forward_workspace_bytes(storage dtype, stages path, int B, int64_t T, int H, int K, int V) {
  if (dtype == storage::fp16)
    return fp16_widened_bytes(false, B, T, H, K, V) +
           forward_workspace_bytes(storage::fp32, path, B, T, H, K, V);
  return with_storage(dtype,
                      [&](auto x) { return forward_bytes<decltype(x)>(path, B, T, H, K, V); });
}

size_t backward_workspace_bytes(storage dtype, int B, int64_t T, int H, int K, int V) {
  if (dtype == storage::fp16)
    return fp16_widened_bytes(true, B, T, H, K, V) +
           backward_workspace_bytes(storage::fp32, B, T, H, K, V);
  return with_storage(dtype, [&](auto x) { return backward_bytes<decltype(x)>(B, T, H, K, V); });
}

namespace {
bool on_bf16_walks(const call& c) {
  return c.dtype == storage::bf16 && on_walks(c);
}
}  // namespace

bool fp16_walk_fits(const call& c) {
  return c.path == stages::fused && fp_walk_fits<float, __half>(c);
}
cudaError_t launch_fp16_walk(const call& c) {
  return launch_fp_walk<float, __half>(c);
}
bool fp16_backward_walks_fit(const call& c) {
  return fp_backward_walks_fit<float, __half>(c);
}
cudaError_t launch_fp16_backward(const call& c) {
  const dims d = dims_of<traits<float>>(c);
  carver w{static_cast<char*>(c.workspace)};
  const backward_plan<traits<float>> p(w, d, c.sequence_rank);
  return launch_fp_backward<float, __half>(c, d, p);
}

cudaError_t launch_forward(const call& c) {
  if (c.dtype == storage::fp16) return launch_forward_fp16(c);
  return with_storage(c.dtype, [&](auto x) { return forward<decltype(x)>(c); });
}

bool forward_takes_bonus(const call& c) {
  return !decodes(c) && on_bf16_walks(c);
}

bool backward_waits_for_inputs(const call& c) {
  return on_bf16_walks(c);
}

cudaError_t launch_backward(const call& c) {
  // The bf16 walks wait for call::walk_waits inside (launch_backward_walks); every other path
  // before its first kernel.
  if (c.walk_waits && !on_bf16_walks(c))
    if (cudaError_t e = cudaStreamWaitEvent(c.stream, c.walk_waits, 0)) return e;
  if (c.dtype == storage::fp16) return launch_backward_fp16(c);
  return with_storage(c.dtype, [&](auto x) { return backward<decltype(x)>(c); });
}

namespace {
template <parallel_scan::recurrence OP>
cudaError_t run_decode_of(storage dtype, const parallel_scan::scan_args& a) {
  if (dtype == storage::fp16) return parallel_scan::run_decode<OP, __half>(a);
  return with_storage(dtype, [&](auto x) { return parallel_scan::run_decode<OP, decltype(x)>(a); });
}
}  // namespace

cudaError_t launch_decode(const call& c, const void* u) {
  parallel_scan::scan_args a{};
  a.B = c.B, a.T = c.T, a.H = c.H, a.K = c.K, a.V = c.V;
  a.scale = c.scale;
  a.q = c.q, a.k = c.k, a.v = c.v, a.g = c.g, a.h0 = c.h0, a.u = u;
  a.o = c.o, a.ht = c.ht;
  a.state_fp32 = c.state_fp32;
  a.stream = c.stream;
  using parallel_scan::recurrence;
  return u ? run_decode_of<recurrence::rwkv6>(c.dtype, a)
           : run_decode_of<recurrence::gla>(c.dtype, a);
}

// ---- sequence parallelism ------------------------------------------------------------
namespace {

using sequence::contribution_parts;
constexpr int kCarryThreads = 256;
unsigned carry_blocks(size_t n) {
  return static_cast<unsigned>((n + kCarryThreads - 1) / kCarryThreads);
}

// A rank takes the bf16 walks, reusing phase 1's pieces in phase 2, where its shape
// lets it (walk_fits; a rank's buffers are aligned); every other rank runs its phases as
// whole calls: phase 1 a forward from a zero state (its ht is L) and, backward, a
// backward from a zero dS (its dh0 is D), with o in a scratch of the workspace.
bool rank_walks(storage dtype, stages path, int K, int V) {
  return dtype == storage::bf16 && path == stages::fused && walk_shape_fits(K, V);
}
size_t scratch_o_bytes(const call& c) {
  carver w{nullptr};
  w.take<char>(static_cast<size_t>(c.B) * c.T * c.H * c.V * storage_bytes(c.dtype));
  return w.used;
}
// The inner call of a rank without the walks: the workspace past the o scratch.
call whole_call(const call& c) {
  call w = c;
  w.sequence_rank = false;
  w.workspace = static_cast<char*>(c.workspace) + scratch_o_bytes(c);
  return w;
}

void fold_pieces(const walk::args& a, dim3 grid, unsigned pieces, const call& c, bool backward,
                 float* out, float* gates) {
  const size_t n = static_cast<size_t>(c.B) * c.H * c.K * c.V;
  sequence::fold_pieces_kernel<walk::KP, walk::BV><<<carry_blocks(n), kCarryThreads, 0, c.stream>>>(
      a.dstate, a.dgate, static_cast<int>(pieces), c.B * c.H, static_cast<int>(grid.x), c.K, c.V,
      backward, out, gates);
}

cudaError_t walks_contribution(const call& c, bool backward, float* out) {
  using bf16 = __nv_bfloat16;
  if (!walk_fits(c)) return cudaErrorInvalidValue;  // rank buffers are aligned
  const contribution_parts parts{c.B * c.H, c.K, c.V};
  walk::args a = walk_args_of(c);
  if (!backward) {
    const auto [grid, pieces] = plan_walk_split(a, c, c.V, c.workspace, walk::C, walk::BV, true);
    if (cudaError_t e = launch_state_pieces(a, grid, pieces, c.stream)) return e;
    fold_pieces(a, grid, pieces, c, false, out + parts.L(), out + parts.G());
    return cudaGetLastError();
  }
  const dims d = dims_of<traits<bf16>>(c);
  carver w{static_cast<char*>(c.workspace)};
  const backward_plan<traits<bf16>> p(w, d, true);
  const auto [grid, pieces] = plan_walk_split(a, c, d.Vp, p.split, walk::C, walk::BV, true);
  if (cudaError_t e = launch_state_pieces(a, grid, pieces, c.stream)) return e;
  fold_pieces(a, grid, pieces, c, false, out + parts.L(), out + parts.G());
  if (cudaError_t e = cudaGetLastError()) return e;
  plan_walk_split(a, c, d.Vp, p.dsplit, walk::C, walk::BV, true);
  a.dfirst_seg = 0;
  if (cudaError_t e =
          launch_dstate_pieces(a, grid, pieces, static_cast<const bf16*>(c.d_o), c.stream))
    return e;
  fold_pieces(a, grid, pieces, c, true, out + parts.D(), nullptr);
  return cudaGetLastError();
}

template <class S>
cudaError_t whole_calls_contribution(const call& c, bool backward, void* contribution) {
  using Acc = typename traits<S>::acc_t;
  const contribution_parts parts{c.B * c.H, c.K, c.V};
  Acc* out = static_cast<Acc*>(contribution);
  call f = whole_call(c);
  f.h0 = f.dht = nullptr;
  f.state_fp32 = std::is_same_v<S, __nv_bfloat16>;
  f.o = c.workspace;
  f.ht = out + parts.L();
  if (cudaError_t e = launch_forward(f)) return e;
  sequence::gate_sum_kernel<Acc, S>
      <<<carry_blocks(static_cast<size_t>(parts.heads) * c.K), kCarryThreads, 0, c.stream>>>(
          static_cast<const S*>(c.g), c.B, c.T, c.H, c.K, out + parts.G());
  if (cudaError_t e = cudaGetLastError()) return e;
  if (!backward) return cudaSuccess;
  // dq … dg here are phase 2's outputs, which it overwrites.
  f.dh0 = out + parts.D();
  f.ht = nullptr;
  return launch_backward(f);
}

template <class Acc, class Given>
void carry_as(const void* gathered, contribution_parts parts, int W, int r, bool backward,
              const void* given, void* out, cudaStream_t stream) {
  sequence::carry_kernel<Acc, Given>
      <<<carry_blocks(parts.state_elems()), kCarryThreads, 0, stream>>>(
          static_cast<const Acc*>(gathered), parts, W, r, backward,
          static_cast<const Given*>(given), static_cast<Acc*>(out));
}

template <class Acc, class Out>
void state_from_acc_as(size_t count, const void* acc, void* out, cudaStream_t stream) {
  sequence::state_from_acc_kernel<Acc, Out><<<carry_blocks(count), kCarryThreads, 0, stream>>>(
      static_cast<const Acc*>(acc), count, static_cast<Out*>(out));
}

}  // namespace

size_t any_length_workspace_bytes(storage dtype, stages path, bool backward, int64_t T, int H,
                                  int K, int V) {
  if (dtype == storage::fp16)
    return fp16_widened_bytes(backward, 1, T, H, K, V) +
           any_length_workspace_bytes(storage::fp32, path, backward, T, H, K, V);
  return with_storage(
      dtype, [&](auto x) { return any_length_bytes<decltype(x)>(path, backward, T, H, K, V); });
}

size_t contribution_elems(int B, int H, int K, int V) {
  return contribution_parts{B * H, K, V}.elems();
}

size_t rank_workspace_bytes(storage dtype, stages path, bool backward, int B, int64_t T, int H,
                            int K, int V) {
  if (rank_walks(dtype, path, K, V)) {
    if (!backward) return walk::split_workspace_bytes(B, T, H, V, walk::C, 4, 4, walk::BV, true);
    call c{};
    c.B = B, c.T = T, c.H = H, c.K = K, c.V = V;
    carver w{nullptr};
    backward_plan<traits<__nv_bfloat16>> p(w, dims_of<traits<__nv_bfloat16>>(c), true);
    return w.used;
  }
  call c{};
  c.dtype = dtype, c.B = B, c.T = T, c.H = H, c.K = K, c.V = V;
  const size_t inner = std::max(forward_workspace_bytes(dtype, path, B, T, H, K, V),
                                backward ? backward_workspace_bytes(dtype, B, T, H, K, V) : 0);
  return scratch_o_bytes(c) + inner;
}

cudaError_t launch_contribution(const call& c, bool backward, void* contribution) {
  if (c.dtype == storage::fp16) return cudaErrorNotSupported;  // one rank only
  if (rank_walks(c.dtype, c.path, c.K, c.V))
    return walks_contribution(c, backward, static_cast<float*>(contribution));
  return with_storage(c.dtype, [&](auto x) {
    return whole_calls_contribution<decltype(x)>(c, backward, contribution);
  });
}

cudaError_t launch_carried_forward(const call& c) {
  if (c.dtype == storage::fp16) return cudaErrorNotSupported;
  if (rank_walks(c.dtype, c.path, c.K, c.V))
    return walk_fits(c) ? launch_walk(c) : cudaErrorInvalidValue;
  return launch_forward(whole_call(c));
}

cudaError_t launch_carried_backward(const call& c) {
  if (c.dtype == storage::fp16) return cudaErrorNotSupported;
  if (rank_walks(c.dtype, c.path, c.K, c.V))
    return walk_fits(c) ? backward<__nv_bfloat16>(c) : cudaErrorInvalidValue;
  return launch_backward(whole_call(c));
}

cudaError_t launch_carry(storage dtype, int B, int H, int K, int V, const void* gathered, int W,
                         int r, bool backward, const void* given, bool given_fp32, void* out,
                         cudaStream_t stream) {
  if (dtype == storage::fp16) return cudaErrorNotSupported;
  const contribution_parts parts{B * H, K, V};
  if (dtype == storage::fp64)
    carry_as<double, double>(gathered, parts, W, r, backward, given, out, stream);
  else if (dtype == storage::fp32 || given_fp32)
    carry_as<float, float>(gathered, parts, W, r, backward, given, out, stream);
  else
    carry_as<float, __nv_bfloat16>(gathered, parts, W, r, backward, given, out, stream);
  return cudaGetLastError();
}

cudaError_t launch_state_from_acc(storage dtype, size_t count, const void* acc, bool to_fp32,
                                  void* out, cudaStream_t stream) {
  if (dtype == storage::fp16) return cudaErrorNotSupported;
  if (dtype == storage::fp64)
    state_from_acc_as<double, double>(count, acc, out, stream);
  else if (dtype == storage::fp32 || to_fp32)
    state_from_acc_as<float, float>(count, acc, out, stream);
  else
    state_from_acc_as<float, __nv_bfloat16>(count, acc, out, stream);
  return cudaGetLastError();
}

}  // namespace glabench::chunked
