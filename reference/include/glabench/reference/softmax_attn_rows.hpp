// softmax_attn's fp64 reference on chosen rows of one (b, h), for checks where the whole
// head, O(T²·D), costs too much (bench's quick verify at long T). Each query row costs
// O(T·D): its scores against the visible keys, lse and o; dq from them. Key rows' dk, dv
// need lse and o of every query that sees the key: when causal the queries from the
// first key row on (cheap for rows near the end), when full every query (the whole
// head's cost).
#pragma once

#include <cstdint>
#include <vector>

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

struct softmax_rows {
  std::vector<int64_t> queries;  // ascending, distinct: the rows of o, lse, dq
  std::vector<int64_t> keys;     // ascending, distinct: the rows of dk, dv
  tensor o;                      // [queries, V]
  tensor lse;                    // [queries]
  tensor dq, dk, dv;             // [queries, K], [keys, K], [keys, V]; backward only
};

// The rows of head (b, h) of p on `in`; with_backward reads in.d_o. Rows are sorted
// and made distinct; each must lie in [0, T). A packed batch (p.varlen()) is refused
// with std::invalid_argument.
softmax_rows softmax_attn_rows(const problem& p, const op_inputs& in, int64_t b, int64_t h,
                               std::vector<int64_t> queries, std::vector<int64_t> keys,
                               bool with_backward);

}  // namespace glabench::reference
