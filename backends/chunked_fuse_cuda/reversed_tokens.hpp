// The fp32 and fp64 backward's dS walk is the forward walk on the sequence reversed
// (backward_fp_walks.cuh). Where each reversed token comes from, shared by its kernels
// and the CPU test tests/reversed_tokens_test.cpp, which checks on the fp64 reference
// that the walk on the reversed tokens gives dv, dh0 and every chunk's dS.
// Plain C++.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define GLABENCH_REVERSED_HD __host__ __device__
#else
#define GLABENCH_REVERSED_HD
#endif

namespace glabench::chunked::reversed {

// The reversed sequence: T tokens padded at the front to whole chunks of `chunk`, so that
// its chunks are the forward's, in reverse order.
GLABENCH_REVERSED_HD inline int64_t padded_length(int64_t T, int chunk) {
  return (T + chunk - 1) / chunk * chunk;
}

// The token s = Tp − 1 − τ that reversed token τ holds (its q′ = k_s, k′ = q_s,
// v′ = scale·do_s); −1 for the front padding (zeros). The map is its own inverse: dv_s
// is the walk's output at τ = Tp − 1 − s.
GLABENCH_REVERSED_HD inline int64_t source_token(int64_t tau, int64_t Tp, int64_t T) {
  const int64_t s = Tp - 1 - tau;
  return s < T ? s : -1;
}

// The token whose gate reversed token τ takes, one on from its source (s + 1): the
// decay between s and a later s′ is then the gates s + 1 … s′, as the forward's is. −1
// for none (gate 0): the last token and the padding.
GLABENCH_REVERSED_HD inline int64_t gate_token(int64_t tau, int64_t Tp, int64_t T) {
  const int64_t s = source_token(tau, Tp, T);
  return s >= 0 && s + 1 < T ? s + 1 : -1;
}

// The walk's state before reversed chunk m is R_n for chunk n = chunks − 1 − m: the dS
// after chunk n but for the gates of its successor's first token, whose token this is
// (dS_n = e^{g_t} ⊙ R_n by rows); −1 for the last chunk (dS = R = dht).
GLABENCH_REVERSED_HD inline int chunk_of_state(int m, int chunks) {
  return chunks - 1 - m;
}
GLABENCH_REVERSED_HD inline int64_t dS_factor_token(int n, int chunk, int64_t T) {
  const int64_t t = static_cast<int64_t>(n + 1) * chunk;
  return t < T ? t : -1;
}

}  // namespace glabench::chunked::reversed
