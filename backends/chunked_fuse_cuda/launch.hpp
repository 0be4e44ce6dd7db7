// The host side of the chunked kernels: what a forward or backward call needs, its
// workspace, and the launches. Plain C++ (the plugin's .cpp includes it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace glabench::chunked {

enum class storage { fp64, fp32, bf16, fp16 };
enum class stages { fused, separate };

struct call {
  storage dtype;
  stages path;
  int B, H, K, V;
  int64_t T;
  double scale;
  // h0, ht, dht and dh0 in fp32 rather than the storage dtype (16-bit storage only).
  bool state_fp32;
  // A rank's tokens of a sequence-parallel call (below): its first passes cover every
  // segment, and its phases share the workspace.
  bool sequence_rank;
  // fp32's (and fp16's) walk block, 64 or 128 columns of V; 0: by shape (launch.cu).
  int fp32_walk_cols;
  // Device pointers; optional ones null (h0, ht, dht, dh0).
  const void *q, *k, *v, *g, *h0, *d_o, *dht;
  void *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  // rwkv6 on the bf16 walk (rwkv6_as_gla.hpp), forward only, where forward_takes_bonus: u,
  // rwkv6's [H][K] (4-byte aligned). The walk reads q one token on (q'_t = q_{t+1}, zero at a
  // sequence's last token) and writes its row t into o's row t + 1 plus the bonus
  // scale·(q_{t+1}·(u ⊙ k_{t+1}))·v_{t+1}, which it takes itself, rounded once; o's first row is
  // left to the caller. Null: gla.
  const void* u;
  // The backward's state and dS walks side by side (launch_backward: the bf16 walks where the
  // gradient walk takes the chunks, the fp32 and fp64 walks; not a sequence rank), then the
  // listed items' kernel beside the gradient walk (launch_grads_walk): a second stream and
  // the events that fork it from `stream` and join it back. Null stream: one after the other.
  struct pair_streams {
    cudaStream_t stream;
    cudaEvent_t fork, join;
  } pair{};
  // Backward only: null, or an event the stream waits for before the first kernel that reads
  // q and d_o: on the bf16 walks (backward_waits_for_inputs), before the dS pass (not the
  // state walk); on any other path, before its first kernel. rwkv6's shifted q and do,
  // computed on a side stream meanwhile.
  cudaEvent_t walk_waits;
  void* workspace;
  cudaStream_t stream;
};

// Bytes of an element in the storage dtype, and in its accumulator type (states, a
// sequence-parallel rank's contribution).
inline size_t storage_bytes(storage s) {
  return s == storage::fp64 ? 8 : s == storage::fp32 ? 4 : 2;
}
inline size_t acc_bytes(storage s) {
  return s == storage::fp64 ? 8 : 4;
}

size_t forward_workspace_bytes(storage dtype, stages path, int B, int64_t T, int H, int K, int V);
size_t backward_workspace_bytes(storage dtype, int B, int64_t T, int H, int K, int V);
// The workspace of a call of one sequence of any length up to T (B = 1): a packed batch's
// sequences, each a call of its own on one workspace.
size_t any_length_workspace_bytes(storage dtype, stages path, bool backward, int64_t T, int H,
                                  int K, int V);

cudaError_t launch_forward(const call& c);
cudaError_t launch_backward(const call& c);
// Whether launch_forward(c) honours c.u: bf16 on the chunk walk, T > 1.
bool forward_takes_bonus(const call& c);
// Whether launch_backward(c) runs kernels that read neither q nor d_o before it waits for
// c.walk_waits (bf16 on the walks): where not, a side stream gains nothing.
bool backward_waits_for_inputs(const call& c);

// Decoding, T = 1 (a packed batch's one-token sequences too): no chunk to walk, so the
// fused path hands the token to the recurrent backends' decode kernels
// (../common/parallel_scan/decode_kernel.cuh), which stream the state: gla's recurrence,
// or rwkv6's where `u` (its bonus [H,K]) is given.
inline bool decodes(const call& c) {
  return c.path == stages::fused && !c.sequence_rank && c.T == 1;
}
cudaError_t launch_decode(const call& c, const void* u = nullptr);

// fp16 storage (fp16_storage.cu): the tensors widened to fp32 in the head of the
// workspace (these bytes, states counted too: an upper bound), the fp32 paths run on
// them, the outputs rounded back.
size_t fp16_widened_bytes(bool backward, int B, int64_t T, int H, int K, int V);
cudaError_t launch_forward_fp16(const call& c);
// fp32's pipelined walk on fp16 tokens, read and written in fp16 (states in fp32): where
// the walk takes the call (fused path, K ≤ 128, rows of whole 16-byte vectors).
bool fp16_walk_fits(const call& c);
cudaError_t launch_fp16_walk(const call& c);
// Its backward likewise (the walks' state passes, dq, dk and dg), where the walks take it.
bool fp16_backward_walks_fit(const call& c);
cudaError_t launch_fp16_backward(const call& c);
cudaError_t launch_backward_fp16(const call& c);

// ---- Sequence parallelism (sequence_parallel.hpp) ----------------------------------------
// A rank's tokens run as a call of their own (c.sequence_rank), in two phases around the
// exchange between ranks. Phase 1 leaves the rank's contribution, in the accumulator type
// (fp32 for bf16 storage, else the storage dtype), per head: L [K][V], the state its
// tokens leave from a zero state; D [K][V], the dS they leave at their start from a zero
// dS at their end (backward only); G [K], their gates summed, in log2. Laid out
// [L: B·H·K·V][D: B·H·K·V][G: B·H·K]. Phase 2 is the call itself, with c.h0 the state
// carried to the rank and (backward) c.dht the dS carried back to it, both in the
// accumulator type (c.state_fp32 at bf16), on the workspace phase 1 had: the bf16 walks
// reuse phase 1's first passes.
size_t contribution_elems(int B, int H, int K, int V);
size_t rank_workspace_bytes(storage dtype, stages path, bool backward, int B, int64_t T, int H,
                            int K, int V);
cudaError_t launch_contribution(const call& c, bool backward, void* contribution);
cudaError_t launch_carried_forward(const call& c);
cudaError_t launch_carried_backward(const call& c);

// The state carried to rank r of W from their gathered contributions (W of them, one
// after another, in the accumulator type) into `out` (the accumulator type): forward, from
// `given` (h0, or zero when null) across ranks 0 … r−1; backward, the dS from `given`
// (dht) back across ranks W−1 … r+1. `given` is in the storage dtype, or fp32 where
// given_fp32.
cudaError_t launch_carry(storage dtype, int B, int H, int K, int V, const void* gathered, int W,
                         int r, bool backward, const void* given, bool given_fp32, void* out,
                         cudaStream_t stream);
// A state in the accumulator type into the storage dtype, or fp32 where to_fp32.
cudaError_t launch_state_from_acc(storage dtype, size_t count, const void* acc, bool to_fp32,
                                  void* out, cudaStream_t stream);

}  // namespace glabench::chunked
