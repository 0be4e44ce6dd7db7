// The ring's schedule, host side and plain C++: how the sequence splits into shards
// (ragged where T does not divide), which chunks a shard holds in each layout, and which
// key/value chunk meets which query chunk at each ring step, with the mask of that pair.
// The one-GPU path and the NCCL path walk the same plan.
#pragma once

#include <cstdint>
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
  if (kv.begin > q.end - 1) return pair_mask::skip;  // every key after the last query
  if (kv.end - 1 <= q.begin) return pair_mask::full;  // every key at or before the first query
  if (q == kv) return pair_mask::causal_diagonal;
  // Chunks of one split never partly overlap; a plan that made them would be a bug.
  throw std::logic_error("ring plan: query and key chunks partly overlap");
}

// At ring step s, shard r works on the key/value blocks that started on shard (r − s)
// mod N: step 0 is its own block, and each step passes blocks one shard onwards.
inline int kv_source(int shard, int step, int shards) { return ((shard - step) % shards + shards) % shards; }

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

inline const char* layout_name(layout l) { return l == layout::ring ? "ring" : "zigzag"; }

}  // namespace glabench::ring
