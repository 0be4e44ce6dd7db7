// The ring's schedule, host side and plain C++: how the sequence splits into shards
// (ragged where T does not divide), which chunks a shard holds in each layout, and which
// key/value chunk meets which query chunk at each ring step, with the mask of that pair.
// The one-GPU path walks the pairs; the NCCL path computes the same pairs grouped into
// one block per rank and step (rank_step), on each shard's rows in a buffer of its own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace glabench::ring {

// Token rows [begin, end) of the sequence.
struct span {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const span& o) const { return begin == o.begin && end == o.end; }
};

// ring: shard r holds chunk r of N. zigzag (causal load balance): the sequence is cut
// into 2N chunks and shard r holds chunks r and 2N−1−r, so every shard has one early
// and one late chunk and the causal work per shard is equal.
enum class layout { ring, zigzag };

// What a (query chunk, key chunk) pair computes under the causal flag.
enum class pair_mask {
  full,             // every key is visible to every query
  causal_diagonal,  // the same chunk: key j visible to query i when j ≤ i
  skip,             // every key is after every query: nothing to compute
};

// T split into n chunks whose sizes differ by at most one (the first T mod n are longer).
inline std::vector<span> split_even(int64_t T, int n) {
  if (n < 1 || T < 1) throw std::invalid_argument("split_even: T and n must be at least 1");
  std::vector<span> out;
  const int64_t base = T / n, longer = T % n;
  int64_t at = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t len = base + (i < longer ? 1 : 0);
    out.push_back({at, at + len});
    at += len;
  }
  return out;
}

// The chunks shard r holds, in sequence order. Empty chunks (T smaller than the chunk
// count) are dropped: a shard may hold nothing.
inline std::vector<std::vector<span>> shard_chunks(int64_t T, int shards, layout l) {
  std::vector<std::vector<span>> out(static_cast<size_t>(shards));
  if (l == layout::ring) {
    const std::vector<span> c = split_even(T, shards);
    for (int r = 0; r < shards; ++r)
      if (c[r].size() > 0) out[r].push_back(c[r]);
  } else {
    const std::vector<span> c = split_even(T, 2 * shards);
    for (int r = 0; r < shards; ++r)
      for (const span& s : {c[r], c[2 * shards - 1 - r]})
        if (s.size() > 0) out[r].push_back(s);
  }
  return out;
}

inline pair_mask mask_of(span q, span kv, bool causal) {
  if (!causal) return pair_mask::full;
  if (kv.begin > q.end - 1) return pair_mask::skip;   // every key after the last query
  if (kv.end - 1 <= q.begin) return pair_mask::full;  // every key at or before the first query
  if (q == kv) return pair_mask::causal_diagonal;
  // Chunks of one split never partly overlap; a plan that made them would be a bug.
  throw std::logic_error("ring plan: query and key chunks partly overlap");
}

// At ring step s, shard r works on the key/value blocks that started on shard (r − s)
// mod N: step 0 is its own block, and each step passes blocks one shard onwards.
inline int kv_source(int shard, int step, int shards) {
  return ((shard - step) % shards + shards) % shards;
}

// One unit of work: a query chunk against a key/value chunk.
struct block_pair {
  int q_shard, kv_shard, step;
  span q, kv;
  pair_mask mask;
};

// Every pair the ring computes, step by step, and within a step shard by shard; skipped
// pairs left out. Every query chunk meets its own chunk (at step 0), so every query row
// sees at least one key.
inline std::vector<block_pair> ring_schedule(int64_t T, int shards, layout l, bool causal) {
  const auto chunks = shard_chunks(T, shards, l);
  std::vector<block_pair> out;
  for (int step = 0; step < shards; ++step)
    for (int r = 0; r < shards; ++r) {
      const int src = kv_source(r, step, shards);
      for (const span& q : chunks[r])
        for (const span& kv : chunks[src]) {
          const pair_mask m = mask_of(q, kv, causal);
          if (m != pair_mask::skip) out.push_back({r, src, step, q, kv, m});
        }
    }
  return out;
}

// A packed batch on one device, given its N + 1 offsets: one pair a sequence, its queries
// against its keys (causal_diagonal under a causal mask, else full); each pair is its
// rows' only one.
inline std::vector<block_pair> packed_schedule(const std::vector<int64_t>& offsets, bool causal) {
  std::vector<block_pair> out;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const span s{offsets[i], offsets[i + 1]};
    out.push_back({0, 0, 0, s, s, causal ? pair_mask::causal_diagonal : pair_mask::full});
  }
  return out;
}

// ---- the ring across ranks: one block per rank and step ---------------------------------
//
// A rank keeps its shard's chunks one after another, in sequence order, in buffers of its
// own ("local rows" 0 … shard_rows − 1). At each step, every pair of its query chunks and
// the key/value chunks it holds then, the skipped ones aside, forms one rectangle of
// local rows (as in ring-flash-attention):
//   - step 0 (its own keys): all its rows against all of them; causal, the local causal
//     mask (key j visible to query i when j ≤ i) is the sequence's, since both sides keep
//     sequence order;
//   - zigzag, causal, keys from an earlier shard: all queries against the keys' first
//     chunk; from a later shard: the queries' second chunk against all keys;
//   - plain ring, causal: the whole shard against the whole held shard, or nothing.

inline int64_t shard_rows(const std::vector<span>& chunks) {
  int64_t n = 0;
  for (const span& c : chunks) n += c.size();
  return n;
}

// The rows of the longest shard: every rank's buffers have this many rows per batch, so
// one geometry fits every rank's tensors.
inline int64_t longest_shard(const std::vector<std::vector<span>>& chunks) {
  int64_t n = 0;
  for (const auto& c : chunks) n = std::max(n, shard_rows(c));
  return n;
}

// Chunk i of a shard in the shard's local rows.
inline span local_rows(const std::vector<span>& chunks, size_t i) {
  int64_t at = 0;
  for (size_t j = 0; j < i; ++j) at += chunks[j].size();
  return {at, at + chunks[i].size()};
}

// What rank r computes at step s: local query rows q (of its shard) against local key rows
// kv (of shard kv_source(r, s)), with mask full or causal_diagonal; nullopt: nothing is
// visible. Throws std::logic_error when the visible pairs are not one such block (not
// so for ring and zigzag; the plan test checks every case).
struct step_block {
  span q, kv;
  pair_mask mask;
};
inline std::optional<step_block> rank_step(const std::vector<std::vector<span>>& chunks, int r,
                                           int s, bool causal) {
  const int n = int(chunks.size()), src = kv_source(r, s, n);
  const std::vector<span>&qc = chunks[size_t(r)], &kc = chunks[size_t(src)];
  std::optional<step_block> out;
  for (size_t i = 0; i < qc.size(); ++i)
    for (size_t j = 0; j < kc.size(); ++j) {
      if (mask_of(qc[i], kc[j], causal) == pair_mask::skip) continue;
      const span lq = local_rows(qc, i), lk = local_rows(kc, j);
      if (!out) out = step_block{lq, lk, pair_mask::full};
      out->q = {std::min(out->q.begin, lq.begin), std::max(out->q.end, lq.end)};
      out->kv = {std::min(out->kv.begin, lk.begin), std::max(out->kv.end, lk.end)};
    }
  if (!out) return out;
  if (causal && src == r) out->mask = pair_mask::causal_diagonal;
  const bool diagonal = out->mask == pair_mask::causal_diagonal;
  if (diagonal && !(out->q == out->kv))
    throw std::logic_error("ring plan: a rank's causal step 0 does not cover its own rows");
  // Every chunk pair inside the rectangle must be what the block computes for it.
  for (size_t i = 0; i < qc.size(); ++i)
    for (size_t j = 0; j < kc.size(); ++j) {
      const span lq = local_rows(qc, i), lk = local_rows(kc, j);
      if (lq.size() == 0 || lk.size() == 0) continue;
      const bool inside = lq.begin >= out->q.begin && lq.end <= out->q.end &&
                          lk.begin >= out->kv.begin && lk.end <= out->kv.end;
      if (!inside) continue;
      const pair_mask computed = !diagonal ? pair_mask::full
                                 : i == j  ? pair_mask::causal_diagonal
                                 : i > j   ? pair_mask::full
                                           : pair_mask::skip;
      const pair_mask wanted = mask_of(qc[i], kc[j], causal);
      const bool one_row_diagonal = computed == pair_mask::causal_diagonal &&
                                    wanted == pair_mask::full &&
                                    qc[i].size() == 1;  // mask_of calls a one-token diagonal full
      if (computed != wanted && !one_row_diagonal)
        throw std::logic_error("ring plan: rank " + std::to_string(r) + "'s step " +
                               std::to_string(s) + " is not one block");
    }
  return out;
}

inline const char* layout_name(layout l) {
  return l == layout::ring ? "ring" : "zigzag";
}

}  // namespace glabench::ring
