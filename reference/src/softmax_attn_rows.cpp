// softmax_attn on chosen rows of one head (softmax_attn_rows.hpp), from the row math of
// softmax_head.hpp that the whole-head reference uses.
#include "glabench/reference/softmax_attn_rows.hpp"

#include <algorithm>
#include <stdexcept>

#include "glabench/reference/parallel_for.hpp"
#include "softmax_head.hpp"

namespace glabench::reference {
namespace {

void sort_rows(std::vector<int64_t>& rows, int64_t T) {
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (!rows.empty() && (rows.front() < 0 || rows.back() >= T))
    throw std::out_of_range("softmax_attn_rows: a row outside [0, T)");
}

}  // namespace

softmax_rows softmax_attn_rows(const problem& p, const op_inputs& in, int64_t b, int64_t h,
                               std::vector<int64_t> queries, std::vector<int64_t> keys,
                               bool with_backward) {
  if (p.varlen())
    throw std::invalid_argument(
        "softmax_attn_rows: packed variable-length batches are not supported");
  if (with_backward) require_cotangent(in);
  sort_rows(queries, p.T);
  sort_rows(keys, p.T);
  const head_rows rows{p, in, b, h};
  softmax_rows r;
  r.queries = queries;
  r.keys = keys;
  const int64_t nq = int64_t(queries.size()), nk = int64_t(keys.size());

  // The queries whose lse and o are needed: the asked ones and, for dk and dv, every
  // query that sees a key row.
  std::vector<int64_t> need = queries;
  if (with_backward && nk > 0)
    for (int64_t t = p.causal ? keys.front() : 0; t < p.T; ++t) need.push_back(t);
  sort_rows(need, p.T);
  const int64_t nn = int64_t(need.size());
  std::vector<double> lse(nn), o(nn * p.V);
  parallel_for(nn, [&](int64_t i) {
    lse[i] = forward_row(rows, need[i], rows.scores(need[i]), o.data() + i * p.V);
  });
  auto index_of = [&](int64_t t) {
    return std::lower_bound(need.begin(), need.end(), t) - need.begin();
  };

  r.o = tensor({nq, p.V});
  r.lse = tensor({nq});
  for (int64_t a = 0; a < nq; ++a) {
    const int64_t i = index_of(queries[a]);
    r.lse.ptr()[a] = lse[i];
    std::copy_n(o.data() + i * p.V, p.V, r.o.ptr() + a * p.V);
  }
  if (!with_backward) return r;

  std::vector<double> D(nn);
  for (int64_t i = 0; i < nn; ++i) D[i] = dot_n(rows.d_o(need[i]), o.data() + i * p.V, p.V);

  r.dq = tensor({nq, p.K});
  parallel_for(nq, [&](int64_t a) {
    const int64_t t = queries[a], i = index_of(t);
    const std::vector<double> s = rows.scores(t);
    double* dq = r.dq.ptr() + a * p.K;
    for (int64_t tau = 0; tau < rows.keys(t); ++tau) {
      const pair_grad g = pair_gradient(rows, tau, s[tau], lse[i], rows.d_o(t), D[i]);
      for (int64_t x = 0; x < p.K; ++x) dq[x] += p.scale * g.ds * rows.k(tau)[x];
    }
  });

  r.dk = tensor({nk, p.K});
  r.dv = tensor({nk, p.V});
  parallel_for(nk, [&](int64_t c) {
    const int64_t tau = keys[c];
    double* dk = r.dk.ptr() + c * p.K;
    double* dv = r.dv.ptr() + c * p.V;
    for (int64_t i = 0; i < nn; ++i) {
      const int64_t t = need[i];
      if (tau >= rows.keys(t)) continue;  // key tau is masked for query t
      const pair_grad g = pair_gradient(rows, tau, rows.score(t, tau), lse[i], rows.d_o(t), D[i]);
      for (int64_t x = 0; x < p.K; ++x) dk[x] += p.scale * g.ds * rows.q(t)[x];
      for (int64_t x = 0; x < p.V; ++x) dv[x] += g.prob * rows.d_o(t)[x];
    }
  });
  return r;
}

}  // namespace glabench::reference
