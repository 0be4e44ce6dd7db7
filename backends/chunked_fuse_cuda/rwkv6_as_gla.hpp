// rwkv6 on the gla walks: gla with its queries shifted one token back, and the two terms
// gla has no place for (rwkv6_as_gla.cu; on the bf16 forward walk, inside it). Plain C++.
//
// rwkv6 (r in q, w in g):  o_t = scale·r_t (S_{t−1} + diag(u) k_tᵀ v_t),
//                          S_t = diag(e^{w_t}) S_{t−1} + k_tᵀ v_t.
// gla on q'_t = r_{t+1} (zero at a sequence's last token), the same k, v, g = w and h0
// has the same states, so its o'_t = scale·q'_t S_t = scale·r_{t+1} S_t. Hence
//   o_t = o'_{t−1} + scale·(r_t·(u ⊙ k_t)) v_t,   and at a sequence's first token
//   o'_{−1} = scale·r_t h0 (zero without h0);       ht = gla's ht.
// The strict mask is gla's mask one token on, exact; every exponent the walk takes is
// its own. Backward, with do'_t = do_{t+1} (zero at the last token), gla's dk, dv, dg (dw),
// dh0 and its dq' give
//   dr_t = dq'_{t−1} + scale·(v_t·do_t)(u ⊙ k_t)     (dq'_{−1} = scale·h0 do_t),
//   dk_t += scale·(v_t·do_t)(u ⊙ r_t),   dv_t += scale·(r_t·(u ⊙ k_t)) do_t,
//   du = Σ_t scale·(v_t·do_t)(r_t ⊙ k_t),   dh0 += scale·r_tᵀ do_t at the first token.
// du sums in a fixed order (per block of rows, then over blocks): the same bits each call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "launch.hpp"

namespace glabench::chunked::rwkv6 {

// Where a call's sequences start: B of T tokens each, or a packed batch's offsets on the
// device (B = 1; int64 where wide, else int32), N + 1 of them.
struct sequences {
  const void* cu_seqlens = nullptr;
  bool wide = false;
  int64_t count = 0;
};

// The workspace ahead of the gla call's own (`gla_bytes`): the shifted queries, o' or the
// shifted cotangent and dq', du's partial sums and counters.
size_t workspace_bytes(const call& c, bool backward, size_t gla_bytes);

// The gla call that computes rwkv6's c (c.q is r, c.g is w) with c.workspace carved as
// workspace_bytes says. Two ways:
//  - on the bf16 walk (forward, not packed, where forward_takes_bonus; `on_walk`): the
//    walk reads r one token on itself, takes the bonus and writes o, rounded once;
//    launch_before writes each sequence's first row of o, which the walk leaves;
//  - else gla on the shifted queries (and, backward, cotangent) that launch_before writes,
//    then the terms (launch_forward_terms, launch_backward_terms), o' in the storage dtype:
//    16-bit o is rounded twice there (packed batches, fp16, r or o rows not 8-byte aligned).
struct shifted {
  call gla;
  bool on_walk;
  void* o_prev;  // o' (forward, not on the walk) or dq' (backward)
  void* partials;
  unsigned* counters;  // backward: a head's row blocks done (launch_before zeroes them)
};
shifted plan(const call& c, bool backward, bool packed, const void* u);
cudaError_t launch_before(const call& c, const shifted& s, const sequences& seqs, const void* u,
                          bool backward);

// After the gla call, one launch each: o (forward; nothing on the walk); dr, the bonus's
// share of dk and dv, du, the first token's share of dh0 (backward; du summed by each head's
// last block, in a fixed order). u is [H,K], du [H,K], both in the storage dtype.
cudaError_t launch_forward_terms(const call& c, const shifted& s, const sequences& seqs,
                                 const void* u);
cudaError_t launch_backward_terms(const call& c, const shifted& s, const sequences& seqs,
                                  const void* u, void* du);

}  // namespace glabench::chunked::rwkv6
