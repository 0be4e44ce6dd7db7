// The schedule of the multi-GPU ring (ring_ranks.hpp): what every rank computes at every
// step, forward and backward. At each step a rank computes one block of its rows against
// the key/value shard it holds (ring_plan.hpp's rank_step, ring-flash-attention's step
// structure), through pair_steps.hpp.
//
// Forward, per rank r of W, at step s = 0 … W−1 (kv_source(r, s) = r − s is whose keys
// r has):
//   link stream:    send the key/value shard held now to r+1, receive step s+1's from
//                   r−1 into ring buffer (s+1) mod 2 (after step s−1's compute freed it);
//   compute stream: wait for step s's keys, run the step's block and merge it into the
//                   query rows' running o and lse.
// Backward walks the same steps in reverse (s = W−1 … 0, backward_typed): keys and the
// held keys' dk/dv sums travel to r−1, and each sum ends at its keys' home at s = 0.
// The call ends when every rank holds the outputs of its own shard (ranks_gather brings
// them to the caller's tensors). Events around every wait of the compute stream and
// every transfer (ranks_events) give the report.
#include <cuda_bf16.h>

#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "pair_steps.hpp"
#include "ranks_events.hpp"
#include "ranks_exchange.hpp"
#include "ranks_world.hpp"
#include "ring_ranks.hpp"

namespace glabench::ring::ranks {
namespace {

// Local rows [0, n) less the block's query rows (of_queries) or key rows: the rows a
// step's block did not cover (0, 1 or 2 spans; all of them without a block).
std::vector<span> rows_outside(int64_t n, const std::optional<step_block>& blk, bool of_queries) {
  if (!blk) return {span{0, n}};
  const span t = of_queries ? blk->q : blk->kv;
  std::vector<span> out;
  if (t.begin > 0) out.push_back({0, t.begin});
  if (t.end < n) out.push_back({t.end, n});
  return out;
}

// Rank r's block at step s as a pair of pair_steps.hpp (in local rows).
block_pair pair_of(int r, int s, int W, const step_block& blk) {
  return {r, kv_source(r, s, W), s, blk.q, blk.kv, blk.mask};
}

status check_inputs(const world_state& w, const void* q, const void* k, const void* v) {
  if (q != w.io_q || k != w.io_k || v != w.io_v)
    return "the inputs differ from the ones prepare() was given (multi-GPU calls need prepare "
           "first)";
  return {};
}

template <typename T>
status forward_typed(world_state& w, const forward_io& io) {
  using A = acc_t<T>;
  const problem& lp = w.local;
  const int W = w.where.world, m = 0;
  GLABENCH_TRY(check_inputs(w, io.q, io.k, io.v));
  GLABENCH_TRY(begin_call(w, m, io.stream));
  // cuDNN on two ranks: o itself holds the running result (each block is in the storage
  // dtype already, so one merge of two of them rounds once, as through acc_o), which
  // saves two passes over the compute-type accumulator.
  const bool in_o = W == 2 && lp.block == block_kernel::cudnn;
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready;
  for (int s = 0; s < W; ++s) {
    std::vector<cudaEvent_t> next_ready;
    // Ring buffer (s+1) mod 2 was last read at step s−1 (none before step 1).
    if (s + 1 < W)
      GLABENCH_TRY(pass_keys(w, m, s, s + 1, true, s >= 2 ? computed : std::vector<cudaEvent_t>{},
                             &next_ready));
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      GLABENCH_TRY(begin_step(r, m, s > 0 ? keys_ready[i] : nullptr, &begin));
      const held_keys kv = keys_at(r, s);
      // lse is its own accumulator: the merge reads a row's lse before writing it.
      const forward_tensors<T> x{reinterpret_cast<const T*>(r.q),
                                 reinterpret_cast<const T*>(kv.k),
                                 reinterpret_cast<const T*>(kv.v),
                                 reinterpret_cast<A*>(r.acc_o),
                                 reinterpret_cast<A*>(r.lse),
                                 reinterpret_cast<T*>(r.o),
                                 reinterpret_cast<A*>(r.lse),
                                 reinterpret_cast<T*>(r.block_o),
                                 reinterpret_cast<float*>(r.block_stats),
                                 r.cudnn_workspace,
                                 in_o ? reinterpret_cast<const T*>(r.o) : nullptr};
      const std::optional<step_block>& blk = w.steps[size_t(r.rank)][size_t(s)];
      if (in_o) {
        // Step 0 writes o and lse; step 1 merges into them; a row it does not cover is done.
        if (blk)
          GLABENCH_TRY(forward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{s == 0, true}, s == 0,
                                       x, r.compute));
      } else {
        // Step 0 covers every row (first); the last step writes o for the rows it covers,
        // and the rows whose last block came earlier are written from their accumulator.
        if (blk)
          GLABENCH_TRY(forward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{s == 0, s + 1 == W},
                                       false, x, r.compute));
        if (s + 1 == W)
          for (const span& rows : rows_outside(r.rows, blk, true))
            GLABENCH_TRY(
                fold_rows<T>(lp, rows, lp.V, visit{false, true}, nullptr, x.acc_o, x.o, r.compute));
      }
      GLABENCH_TRY(close_span(r, m, begin, &computed[i]));
    }
    keys_ready = next_ready;
  }
  GLABENCH_TRY(end_call(w, m, {}, io.stream));
  w.forward_ran = true;
  w.next_keys_held = true;  // ring buffer (W−1) mod 2: r+1's keys, the backward's first
  w.pending.o = io.o, w.pending.lse = io.lse;
  return {};
}

// Rows of a rank's [B,R,H,X] buffer set to zero (the rows a step's block left unwritten).
status zero_rows(const problem& lp, int X, size_t elem, const std::vector<span>& rows, char* base,
                 cudaStream_t stream) {
  const size_t row = size_t(lp.H) * X * elem;
  for (const span& c : rows)
    if (c.size() > 0)
      GLABENCH_TRY_CUDA(cudaMemset2DAsync(base + size_t(c.begin) * row, size_t(lp.T) * row, 0,
                                          size_t(c.size()) * row, size_t(lp.B), stream),
                        "cudaMemset2DAsync");
  return {};
}

// The backward walks the ring's steps in reverse, s = W−1 … 0, so that each key shard's
// dk/dv sum ends at its home. At step s rank r holds shard r−s: first r+1's, which the
// forward's last step left in ring buffer (W−1) mod 2; each later one comes from r+1,
// and the sums travel the same way, to r−1. At s = 0 every rank holds its own keys, its
// block covers every row, and it writes dq, dk and dv.
// cuDNN: each block's gradients land in block buffers (the rows it does not cover set to
// zero) and are summed whole-shard: dq on the rank, dk/dv into the sum that r+1 passed on.
// The first step's dk/dv travel as cuDNN wrote them (storage dtype: nothing is lost, and
// half the bytes); later sums in the compute type. The own kernel folds into zeroed
// accumulators itself.
template <typename T>
status backward_typed(world_state& w, const backward_io& io) {
  using A = acc_t<T>;
  const problem& lp = w.local;
  const int W = w.where.world, m = 1;
  if (!w.backward) return "prepare() was given no backward arguments";
  GLABENCH_TRY(check_inputs(w, io.q, io.k, io.v));
  if (io.d_o != w.io_do) return "d_o differs from the one prepare() was given";
  GLABENCH_TRY(begin_call(w, m, io.stream));
  const size_t e = storage_bytes(lp.dtype), a = acc_bytes(lp.dtype);
  // Values in a rank's buffer of D columns (q, dq, dk) and of V columns (dv).
  const int64_t n_d = int64_t(lp.B) * lp.T * lp.H * lp.D, n_v = int64_t(lp.B) * lp.T * lp.H * lp.V;
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready, sums_ready;
  if (!w.forward_ran) {  // the ranks' o and lse are not the forward's: take the caller's
    for (rank_state& r : w.ranks) {
      GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      const std::vector<span>&seq = w.chunks[size_t(r.rank)], loc = local_spans(seq);
      const int from = w.where.devices[0];
      GLABENCH_TRY(copy_ranges(row_ranges(lp, lp.T, lp.V, e, loc), r.o, r.device,
                               row_ranges(w.p, w.p.T, lp.V, e, seq), static_cast<const char*>(io.o),
                               from, r.compute));
      GLABENCH_TRY(copy_ranges(row_ranges(lp, lp.T, 0, a, loc), r.lse, r.device,
                               row_ranges(w.p, w.p.T, 0, a, seq), static_cast<const char*>(io.lse),
                               from, r.compute));
    }
  }
  // r+1's keys, unless the forward's last step left them in ring buffer (W−1) mod 2.
  if (!w.next_keys_held) GLABENCH_TRY(pass_keys(w, m, 0, W - 1, false, {}, &keys_ready));
  const bool cudnn = lp.block == block_kernel::cudnn;
  for (int t = 0; t < W; ++t) {
    const int s = W - 1 - t;
    const bool last = t + 1 == W;
    std::vector<cudaEvent_t> next_ready;
    // Step s−1's keys into ring buffer (s−1) mod 2, last read at step s+1 (none before);
    // at s − 1 = 0 every rank has its own.
    if (s - 1 >= 1) {
      GLABENCH_TRY(pass_keys(w, m, s, s - 1, false, t >= 1 ? computed : std::vector<cudaEvent_t>{},
                             &next_ready));
      w.next_keys_held = false;  // the ring buffers now hold other shards
    }
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      GLABENCH_TRY(begin_step(r, m, keys_ready.empty() ? nullptr : keys_ready[i], &begin));
      const held_keys kv = keys_at(r, s);
      const int b = t % 2;
      const backward_tensors<T> x{reinterpret_cast<const T*>(r.q),
                                  reinterpret_cast<const T*>(kv.k),
                                  reinterpret_cast<const T*>(kv.v),
                                  reinterpret_cast<const T*>(r.o),
                                  reinterpret_cast<const T*>(r.d_o),
                                  reinterpret_cast<const A*>(r.lse),
                                  reinterpret_cast<const A*>(r.row_dots),
                                  reinterpret_cast<A*>(r.acc_dq),
                                  reinterpret_cast<T*>(r.dq),
                                  reinterpret_cast<A*>(r.acc_dk[b]),
                                  reinterpret_cast<A*>(r.acc_dv[b]),
                                  reinterpret_cast<T*>(r.dk),
                                  reinterpret_cast<T*>(r.dv),
                                  reinterpret_cast<T*>(r.block_dq[b]),
                                  reinterpret_cast<T*>(r.block_dk[b]),
                                  reinterpret_cast<T*>(r.block_dv[b]),
                                  reinterpret_cast<float*>(r.packed_lse),
                                  r.cudnn_workspace};
      const std::optional<step_block>& blk = w.steps[size_t(r.rank)][size_t(s)];
      const int64_t held_rows = shard_rows(w.chunks[size_t(kv_source(r.rank, s, W))]);
      if (cudnn) {
        // cuDNN blocks are 16-bit only (the plugin never picks them for fp32 or fp64),
        // so their steps, and the sums they need, are compiled for bf16 and fp16 alone.
        if constexpr (!is_16bit_type<T>) {
          return "cuDNN blocks are 16-bit only";
        } else {
          if (blk)
            GLABENCH_TRY(
                cudnn_backward_block<T>(lp, pair_of(r.rank, s, W, *blk), false, x, r.compute));
          const std::vector<span> q_rest = rows_outside(r.rows, blk, true),
                                  kv_rest = rows_outside(held_rows, blk, false);
          GLABENCH_TRY(zero_rows(lp, lp.D, e, q_rest, r.block_dq[b], r.compute));
          GLABENCH_TRY(zero_rows(lp, lp.D, e, kv_rest, r.block_dk[b], r.compute));
          GLABENCH_TRY(zero_rows(lp, lp.V, e, kv_rest, r.block_dv[b], r.compute));
          // (sum so far) + this block: into the compute-type sum, or at the last step the
          // output. The sum so far is the first step's block (storage dtype) at t = 1.
          auto add_block = [&](int64_t n, const auto* so_far, const T* block, A* sum, T* out) {
            return last ? sum_values<T>(n, so_far, block, out, r.compute)
                        : sum_values<T>(n, so_far, block, sum, r.compute);
          };
          // dq: the first step's block waits for the second.
          if (t == 1)
            GLABENCH_TRY(add_block(n_d, reinterpret_cast<const T*>(r.block_dq[0]), x.block_dq,
                                   x.acc_dq, x.dq));
          if (t >= 2) GLABENCH_TRY(add_block(n_d, x.acc_dq, x.block_dq, x.acc_dq, x.dq));
          // dk, dv: into the sum r+1 passed on (its first step's as cuDNN wrote them).
          if (t >= 1) {
            GLABENCH_TRY(timed_wait(r, m, sums_ready[i]));
            if (t == 1) {
              GLABENCH_TRY(add_block(n_d, reinterpret_cast<const T*>(r.recv_dk), x.block_dk,
                                     x.acc_dk, x.dk));
              GLABENCH_TRY(add_block(n_v, reinterpret_cast<const T*>(r.recv_dv), x.block_dv,
                                     x.acc_dv, x.dv));
            } else {
              GLABENCH_TRY(add_block(n_d, x.acc_dk, x.block_dk, x.acc_dk, x.dk));
              GLABENCH_TRY(add_block(n_v, x.acc_dv, x.block_dv, x.acc_dv, x.dv));
            }
          }
        }
      } else {
        if (t == 0) {  // the kernels fold into zeroed accumulators
          GLABENCH_TRY(row_dots_of<T>(lp, span{0, r.rows}, x.d_o, x.o,
                                      reinterpret_cast<A*>(r.row_dots), r.compute));
          GLABENCH_TRY_CUDA(cudaMemsetAsync(r.acc_dq, 0, size_t(n_d) * a, r.compute),
                            "cudaMemsetAsync");
          GLABENCH_TRY_CUDA(cudaMemsetAsync(r.acc_dk[b], 0, size_t(n_d) * a, r.compute),
                            "cudaMemsetAsync");
          GLABENCH_TRY_CUDA(cudaMemsetAsync(r.acc_dv[b], 0, size_t(n_v) * a, r.compute),
                            "cudaMemsetAsync");
        } else {
          GLABENCH_TRY(timed_wait(r, m, sums_ready[i]));
        }
        if (blk)
          GLABENCH_TRY(backward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{false, last},
                                        visit{false, last}, false, x, r.compute));
      }
      GLABENCH_TRY(close_span(r, m, begin, &computed[i]));
    }
    keys_ready = next_ready;
    if (last) break;
    // The held keys' sums on to r−1; the next keys' arrive from r+1.
    const bool as_written = cudnn && t == 0;
    const int nb = (t + 1) % 2;
    GLABENCH_TRY(exchange(
        w, m, computed,
        [&](rank_state& r, std::vector<message>* out) -> status {
          const int to = (r.rank + W - 1) % W, from = (r.rank + 1) % W;
          const int b = t % 2;
          const size_t elem = as_written ? e : a, k_bytes = buffer_bytes(lp, lp.D, elem),
                       v_bytes = buffer_bytes(lp, lp.V, elem);
          *out = {send_to(as_written ? r.block_dk[0] : r.acc_dk[b], k_bytes, to),
                  send_to(as_written ? r.block_dv[0] : r.acc_dv[b], v_bytes, to),
                  recv_from(as_written ? r.recv_dk : r.acc_dk[nb], k_bytes, from),
                  recv_from(as_written ? r.recv_dv : r.acc_dv[nb], v_bytes, from)};
          return {};
        },
        &sums_ready));
  }
  GLABENCH_TRY(end_call(w, m, {}, io.stream));
  w.pending.dq = io.dq, w.pending.dk = io.dk, w.pending.dv = io.dv;
  return {};
}

template <typename T>
struct forward_call {
  static status run(world_state& w, const forward_io& io) { return forward_typed<T>(w, io); }
};
template <typename T>
struct backward_call {
  static status run(world_state& w, const backward_io& io) { return backward_typed<T>(w, io); }
};

}  // namespace

status plan_cudnn_steps(const problem& p, bool backward, int64_t* most_workspace_bytes) {
  const auto chunks = shard_chunks(p.T, p.shards, p.chunking);
  const auto steps = steps_of(chunks, p.causal);
  std::vector<block_pair> blocks;
  for (int r = 0; r < p.shards; ++r)
    for (int s = 0; s < p.shards; ++s)
      if (const std::optional<step_block>& blk = steps[size_t(r)][size_t(s)])
        blocks.push_back(pair_of(r, s, p.shards, *blk));
  return plan_cudnn_pairs(local_problem(p, chunks), blocks, backward, most_workspace_bytes);
}

status run_forward(const problem& p, const forward_io& io) {
  std::lock_guard<std::mutex> guard(state_lock);
  cuda_plugin::device_guard keep;
  if (!state) return "the multi-GPU ring needs prepare() before its calls";
  return by_dtype<forward_call>(p.dtype, *state, io);
}

status run_backward(const problem& p, const backward_io& io) {
  std::lock_guard<std::mutex> guard(state_lock);
  cuda_plugin::device_guard keep;
  if (!state) return "the multi-GPU ring needs prepare() before its calls";
  return by_dtype<backward_call>(p.dtype, *state, io);
}

}  // namespace glabench::ring::ranks
