// gla fp64 backends (gla_fp64.hpp) with ABI 1.2's prepare, release and last_call_report
// and ABI 1.3's collect, for the harness's calls of them. One source, compiled once per
// variant (PREPARE_PLUGIN_VARIANT), each into its own module:
//   prepared       forward and backward fail unless prepare() ran since the last release
//                  with the very tensors they get (as a multi-GPU backend, which copies
//                  its shards in prepare, would compute on stale shards otherwise), and
//                  backward unless that prepare was for mode BACKWARD; last_call_report
//                  describes the last call as a JSON object. Each call holds its outputs
//                  back until collect() (as a multi-GPU backend leaves each rank's rows
//                  on its device): it leaves NaN in the caller's tensors, so a harness
//                  that reads them without collect fails verification
//   prepare_fails  prepare() fails with a message: the case fails with it
//   bad_report     as prepared, but last_call_report writes text that is not JSON
//   deep_report    as prepared, but last_call_report writes JSON nested 1000 arrays deep
// Each exports prepare_plugin_counts(), so an in-process test can see what ran.
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "gla_fp64.hpp"

namespace {

using namespace glabench::backend_support;

#define VARIANT_IS(name) (std::strcmp(PREPARE_PLUGIN_VARIANT, #name) == 0)

extern const glabench_backend kBackend;

// What prepare() was last given, as a multi-GPU backend would keep its shards.
struct prepared_state {
  bool valid = false;
  glabench_mode mode = GLABENCH_MODE_FORWARD;
  const void *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *o = nullptr;
  const void *d_o = nullptr, *dq = nullptr;
};
prepared_state g_prepared;
const char* g_last_call = "none";
long g_calls_since_prepare = 0;
// Calls of prepare and release since the module was loaded.
long g_prepares = 0, g_releases = 0;

const void* data(const DLTensor* t) {
  return t ? t->data : nullptr;
}

// Outputs held back until collect(), by the caller's tensor they belong in.
std::map<double*, std::vector<double>> g_held;
long g_collects = 0;

// Moves an output's values into g_held and leaves NaN in its place.
void hold(DLTensor* t) {
  if (!t || !t->data) return;
  size_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= size_t(t->shape[i]);
  double* at = reinterpret_cast<double*>(static_cast<char*>(t->data) + t->byte_offset);
  g_held[at].assign(at, at + n);
  std::fill(at, at + n, std::numeric_limits<double>::quiet_NaN());
}

glabench_status collect(glabench_message*) {
  ++g_collects;
  for (auto& [at, values] : g_held) std::copy(values.begin(), values.end(), at);
  g_held.clear();
  return GLABENCH_OK;
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  return gla_fp64::supports(kBackend, p, mode, reason);
}

glabench_status prepare(const glabench_problem* p, glabench_mode mode,
                        const glabench_forward_args* fwd, const glabench_backward_args* bwd,
                        glabench_message* error) {
  ++g_prepares;
  if (VARIANT_IS(prepare_fails))
    return fail(error, GLABENCH_ERROR_RUNTIME, "deliberate prepare failure: the shards do not fit");
  if (!p || !fwd || fwd->struct_size < sizeof(glabench_forward_args))
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT, "prepare: no forward arguments");
  if ((mode == GLABENCH_MODE_BACKWARD) != (bwd != nullptr))
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT,
                "prepare: backward arguments must be given exactly for mode BACKWARD");
  if (p->num_devices != 1 || !p->device_ids || p->device_ids[0] != 0)
    return fail(error, GLABENCH_ERROR_INVALID_ARGUMENT,
                "prepare: a CPU backend must be given one device, 0");
  g_prepared = {true,
                mode,
                data(fwd->q),
                data(fwd->k),
                data(fwd->v),
                data(fwd->g),
                data(fwd->o),
                bwd ? data(bwd->d_o) : nullptr,
                bwd ? data(bwd->dq) : nullptr};
  g_calls_since_prepare = 0;
  return GLABENCH_OK;
}

void release() {
  ++g_releases;
  g_prepared = {};
  g_last_call = "none";
  g_held.clear();
}

// Whether the call's tensors are those prepare() was given.
glabench_status check_prepared(const DLTensor* q, const DLTensor* k, const DLTensor* v,
                               const DLTensor* g, const char* call, glabench_message* error) {
  if (!g_prepared.valid)
    return fail(error, GLABENCH_ERROR_RUNTIME, std::string(call) + " before prepare()");
  if (data(q) != g_prepared.q || data(k) != g_prepared.k || data(v) != g_prepared.v ||
      data(g) != g_prepared.g)
    return fail(error, GLABENCH_ERROR_RUNTIME,
                std::string(call) + " on inputs other than those prepare() was given");
  return GLABENCH_OK;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  if (glabench_status s = check_prepared(a->q, a->k, a->v, a->g, "forward", error)) return s;
  if (data(a->o) != g_prepared.o)
    return fail(error, GLABENCH_ERROR_RUNTIME, "forward into an o prepare() was not given");
  g_last_call = "forward";
  ++g_calls_since_prepare;
  if (glabench_status s = gla_fp64::forward(kBackend, p, a, error)) return s;
  hold(a->o), hold(a->ht);
  return GLABENCH_OK;
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  if (glabench_status s = check_prepared(a->q, a->k, a->v, a->g, "backward", error)) return s;
  if (g_prepared.mode != GLABENCH_MODE_BACKWARD || data(a->d_o) != g_prepared.d_o ||
      data(a->dq) != g_prepared.dq)
    return fail(error, GLABENCH_ERROR_RUNTIME,
                "backward without a prepare() of mode BACKWARD for its d_o and dq");
  g_last_call = "backward";
  ++g_calls_since_prepare;
  if (glabench_status s = gla_fp64::backward(kBackend, p, a, error)) return s;
  hold(a->dq), hold(a->dk), hold(a->dv), hold(a->dg), hold(a->dh0);
  return GLABENCH_OK;
}

glabench_status last_call_report(glabench_message* json) {
  if (VARIANT_IS(bad_report)) {
    write_message(json, "rank_ms: [0.5, 0.6");
    return GLABENCH_OK;
  }
  if (VARIANT_IS(deep_report)) {
    static char deep[2001];
    std::memset(deep, '[', 1000);
    std::memset(deep + 1000, ']', 1000);
    write_message(json, deep);
    return GLABENCH_OK;
  }
  if (std::strcmp(g_last_call, "none") == 0)
    return fail(json, GLABENCH_ERROR_UNSUPPORTED, "no call yet");
  char text[256];
  std::snprintf(text, sizeof text,
                R"({"last_call": "%s", "calls_since_prepare": %ld, "prepared_mode": "%s", )"
                R"("rank_ms": [0.25, 0.5], "comm_hidden_fraction": 0.93})",
                g_last_call, g_calls_since_prepare,
                g_prepared.mode == GLABENCH_MODE_BACKWARD ? "backward" : "forward");
  write_message(json, text);
  return GLABENCH_OK;
}

const glabench_backend kBackend = {GLABENCH_ABI_MAJOR,
                                   GLABENCH_ABI_MINOR,
                                   sizeof(glabench_backend),
                                   "test_" PREPARE_PLUGIN_VARIANT,
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
                                   prepare,
                                   release,
                                   last_call_report,
                                   collect};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}

// For in-process tests: how many times prepare() and release() ran.
extern "C" GLABENCH_EXPORT void prepare_plugin_counts(long* prepares, long* releases) {
  *prepares = g_prepares;
  *releases = g_releases;
}
