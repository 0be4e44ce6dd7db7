// A packed batch's sequences side by side. Each sequence is a call of its own (B = 1, its
// tokens), and a call of a few hundred tokens fills few SMs, so the calls run on up to
// kStreams streams at once, forked from and joined back into the caller's stream by
// events (a CUDA graph captures them), in packed_order.hpp's order, each stream on its own
// part of the workspace, sized for the longest sequence it runs. Where those parts do not
// fit the workspace the calls run one after another on the caller's stream. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "../common/cuda_error.hpp"
#include "launch.hpp"
#include "side_streams.hpp"

namespace glabench::chunked::packed {

constexpr int kStreams = kSideStreams;

// The workspace of a packed batch of T tokens: the parts of kStreams sequences at once,
// whatever their lengths (the calls' workspace grows with their tokens; a chunk per
// sequence more allows for rounding), and never less than one call of T tokens.
size_t workspace_bytes(storage dtype, stages path, bool backward, int64_t T, int H, int K, int V);

// Sequence i's call (its tokens, its state rows) on the given workspace and stream.
using sequence_launch = std::function<cudaError_t(int64_t i, void* workspace, cudaStream_t stream)>;

// Every sequence of the offsets `at` (N + 1 of them) launched once: side by side where
// their parts fit in `bytes` of `workspace`, else one after another on `stream`. `c` gives
// the sizes each call's workspace depends on.
cuda_plugin::status run(const std::vector<int64_t>& at, const call& c, bool backward,
                        void* workspace, size_t bytes, cudaStream_t stream,
                        const sequence_launch& launch);

}  // namespace glabench::chunked::packed
