// Backends that compute gla in fp64 correctly (gla_fp64.hpp) in their first forward of
// a problem — the call the bench's quick verify checks — and differently in every later
// one, for the bench's check of the timed calls' outputs. One source, compiled once per
// variant (LATER_CALLS_PLUGIN_VARIANT), each into its own module:
//   nan_later     later forwards write NaN into the last element of o
//   stale_later   later forwards write nothing (o keeps the bench's NaN poison)
//   drift_later   later forwards scale o by 1 + 1e-6 (far over fp64's 1e-12 threshold)
//   jitter_later  later forwards scale o by 1 + 1e-15: not bit for bit, but within the
//                 threshold, as a backend that is not deterministic (the row stays ok)
// and, for bench's --max-call-seconds, which judges a warm call:
//   slow_first    the first forward of a problem takes 1.2 s (as a kernel that compiles or
//                 autotunes at its first call), later ones no longer than the others'
//   slow_every    every forward takes 0.3 s
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <tuple>

#include "gla_fp64.hpp"

namespace {

using namespace glabench::backend_support;

#define VARIANT_IS(name) (std::strcmp(LATER_CALLS_PLUGIN_VARIANT, #name) == 0)

extern const glabench_backend kBackend;

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  return gla_fp64::supports(kBackend, p, mode, reason);
}

// Whether this forward is not the first one of its problem.
bool is_later_call(const glabench_problem& p) {
  static std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> last{-1, -1, -1, -1, -1};
  const auto now = std::make_tuple(p.B, p.T, p.H, p.K, p.V);
  const bool later = now == last;
  last = now;
  return later;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  const bool later = is_later_call(*p);
  if ((!later && VARIANT_IS(slow_first)) || VARIANT_IS(slow_every))
    std::this_thread::sleep_for(std::chrono::milliseconds(VARIANT_IS(slow_first) ? 1200 : 300));
  if (later && VARIANT_IS(stale_later)) return GLABENCH_OK;
  if (glabench_status s = gla_fp64::forward(kBackend, p, a, error)) return s;
  if (!later) return GLABENCH_OK;
  double* o = data_of<double>(a->o);
  const int64_t n = gla_fp64::numel(a->o);
  if (VARIANT_IS(nan_later)) o[n - 1] = std::nan("");
  const double scale = VARIANT_IS(drift_later)    ? 1 + 1e-6
                       : VARIANT_IS(jitter_later) ? 1 + 1e-15
                                                  : 1;
  for (int64_t i = 0; i < n; ++i) o[i] *= scale;
  return GLABENCH_OK;
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  return gla_fp64::backward(kBackend, p, a, error);
}

const glabench_backend kBackend = {GLABENCH_ABI_MAJOR,
                                   GLABENCH_ABI_MINOR,
                                   sizeof(glabench_backend),
                                   "test_" LATER_CALLS_PLUGIN_VARIANT,
                                   "0.0.0",
                                   kDLCPU,
                                   gla_fp64::kCapabilities,
                                   gla_fp64::kNumCapabilities,
                                   gla_fp64::device_available,
                                   supports,
                                   gla_fp64::workspace_size,
                                   forward,
                                   backward,
                                   GLABENCH_BUILD_INFO_INIT,
                                   nullptr,
                                   nullptr,
                                   nullptr,
                                   nullptr};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
