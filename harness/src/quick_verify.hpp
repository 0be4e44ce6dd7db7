// The quick verify `glabench bench` runs before it times a configuration: the backend's
// outputs (and, for fwdbwd, gradients) on the very inputs that will be timed, checked
// on two sampled (batch, head) pairs — the first and the last — against the fp64
// reference on the same inputs rounded to the storage dtype. One head of a large
// problem costs the reference seconds where the whole problem would cost hours.
// softmax_attn above kQuickVerifyWholeHeadMaxT tokens, where one head alone costs hours
// (O(T²·D)), is checked on sampled rows of each sampled head instead: o, lse and dq on
// kQuickVerifyQueryRows query rows spread over [0, T), the first and the last among them;
// dk and dv, when causal, on key rows at the end of the sequence (the last 16 and 8
// more in the last 256), which only the queries after them see. Full attention's dk and
// dv would need every query's lse: they go unchecked there (quick_verify_note).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_results.hpp"
#include "dtype.hpp"
#include "glabench/reference/problem.hpp"
#include "glabench/reference/softmax_attn_rows.hpp"
#include "tensor_check.hpp"

namespace glabench {

// The longest softmax_attn sequence whose sampled heads are checked whole.
inline constexpr int64_t kQuickVerifyWholeHeadMaxT = 8192;
// Above it, the query rows checked in each sampled head.
inline constexpr int64_t kQuickVerifyQueryRows = 24;
// rwkv6's du sums over the sequences: a sampled head's du is checked against the
// reference's summed over every sequence of that head, for up to this many sequences.
inline constexpr int64_t kQuickVerifyDuMaxSequences = 16;

struct head_index {
  int64_t b, h;
};

// The fp64 reference outputs (and gradients) of one sampled head: the whole head in
// out and grads, or, for softmax_attn above the whole-head limit, sampled rows of it in
// rows (out and grads then empty).
struct expected_head {
  head_index at;
  op_outputs out;
  std::optional<op_gradients> grads;
  std::optional<reference::softmax_rows> rows;
  // rwkv6 with gradients, up to kQuickVerifyDuMaxSequences sequences: head h's du summed
  // over every sequence ([1, K]), what the backend's du row h holds.
  std::optional<tensor> du;
};

// The reference on each sampled head of `in` rounded to d (h0 and dht to state_d, the
// backend's state dtype, as backend_runner hands them over), the heads in parallel; with
// gradients when asked (from in.d_o and in.dht). softmax_attn with T over
// whole_head_max_T gets sampled rows (a parameter so that tests reach it at small T).
std::vector<expected_head> reference_heads(const problem& p, const op_inputs& in, dtype d,
                                           dtype state_d, bool with_backward,
                                           int64_t whole_head_max_T = kQuickVerifyWholeHeadMaxT);

// The query and key rows checked above the whole-head limit: query rows spread over
// [0, T) with the first and the last; key rows (causal with backward only, else none)
// the last 16 and 8 more spread over the 240 before them.
std::vector<int64_t> sampled_query_rows(int64_t T);
std::vector<int64_t> sampled_key_rows(const problem& p, bool with_backward);

// What the quick verify of `want` leaves unchecked, for the row's message: empty when
// nothing; with backward on full attention checked by rows, that dk and dv were not; for
// rwkv6 over more than kQuickVerifyDuMaxSequences sequences, that du was not.
std::string quick_verify_note(const problem& p, const std::vector<expected_head>& want,
                              bool with_backward);

// One sampled head's results from the backend, shaped with B = H = 1.
struct head_result {
  op_outputs out;
  std::optional<op_gradients> grads;  // fwdbwd only
};

// The worst rel_l2 per tensor over the sampled heads, each against the dtype's
// tolerance; `fetch` brings one head's results back from the backend (for sampled rows,
// the rows are picked from the whole head it brings). rwkv6's du, which sums over the
// sequences, is checked where the expected head has it (`fetch` brings the backend's
// row h as [1, K]). `returned`: the
// dtypes the outputs come back in, where what they cannot hold is credited (tensor_check.hpp);
// none: no credit.
std::vector<tensor_check> check_heads(const problem& p, bool has_h0,
                                      const std::vector<expected_head>& want, double tol,
                                      const std::function<head_result(head_index)>& fetch,
                                      const std::optional<output_dtypes>& returned = std::nullopt);

}  // namespace glabench
