// `glabench bench`: time every selected backend × op × shape × dtype × mode.
//
// A configuration of softmax_attn is run once per mask asked for (--mask causal, full).
//
// Per configuration, in order:
//   1. skip it (with the reason) when the backend does not support it or cannot run
//      here, when it would not fit in host or device memory, or when a smaller shape
//      already measured predicts one call longer than max_call_s;
//   2. a quick verify on the very inputs that will be timed: one call with NaN-poisoned
//      outputs, compared on two sampled (batch, head) pairs — the first and the last —
//      with the fp64 reference on the same rounded inputs; a failure is recorded with
//      its error and no time;
//   3. with --timing graph, the call captured once in a CUDA graph (captured_call.hpp;
//      a backend whose call cannot be captured gets a skipped row that says why);
//   4. warm-up calls, then samples: each sample poisons the outputs with NaN, flushes
//      the caches (unless hot) and times one call (fwd) or forward + backward (fwdbwd)
//      — eager: the backend's calls; graph: one launch of the graph — on the backend's
//      stream (device_ids[0]'s: a multi-device backend joins it, docs/design.md §3);
//      sampling stops when the coefficient of variation is under noise_target after at
//      least min_reps samples, at max_reps, or once time_cap_s has passed with at least
//      5 samples (the fewest `glabench compare` runs its U test on);
//   5. the outputs of the last timed call compared with the quick verify's, every
//      element (timed_outputs.hpp): a difference beyond the dtype's threshold, or a NaN,
//      fails the row.
// Inputs are drawn per (op, shape, gate regime): every backend, dtype, mode and timing
// of a regime sees the same values.
// The backend's own prepare() (ABI 1.2) runs with the inputs' upload, before step 2,
// untimed; its release() when the configuration is done; its last_call_report() after
// the last sample, recorded as the row's backend_report.
// Rows go to the caller as they finish (row_done: the CLI prints them, bench_printer.hpp);
// the results file keeps Google Benchmark's JSON layout (bench_results.hpp).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "bench_device.hpp"
#include "bench_results.hpp"
#include "bench_shapes.hpp"
#include "dtype.hpp"
#include "glabench/reference/problem.hpp"

namespace glabench {

struct bench_options {
  std::vector<const loaded_backend*> backends;
  std::vector<op_kind> ops;  // empty: every op the backend has
  std::vector<bench_shape> shapes;
  std::vector<dtype> dtypes;  // empty: every dtype the backend has a forward in
  std::vector<std::string> modes = {"fwd", "fwdbwd"};
  // softmax_attn's masks (--mask): "causal" and/or "full", each softmax_attn
  // configuration run once per mask. gla and rwkv6 are causal by nature: they ignore it.
  std::vector<std::string> masks = {"causal"};
  // The gate regimes (--gates, gate_regime.hpp) each gla and rwkv6 configuration is run
  // under, once per regime; softmax_attn has no gates and runs once.
  std::vector<std::string> gates = {"mild"};
  // How samples are timed (--timing): "eager" and/or "graph" (captured_call.hpp), each
  // configuration run once per mode. A host backend's graph rows are skipped.
  std::vector<std::string> timings = {"eager"};
  bool hot = false;
  int warmup = kDefaultWarmupCalls;
  stopping_rule stopping;  // noise target, min and max reps, time cap
  double max_call_s = 1.0;
  uint64_t seed = 20261122;
  // The devices each backend is given (--devices; glabench_problem.device_ids), checked
  // by the caller: non-empty, no repeats. Timing is on the first one's stream; with more
  // than one, every listed device's L2 is flushed before a sample. A host backend runs
  // on the host when one device is listed; with more, its configurations are skipped.
  std::vector<int32_t> devices{0};
  // Called before each configuration runs and after each sample (terminal progress).
  std::function<void(size_t index, size_t count, const std::string& what)> progress;
  // Called with each configuration's row once it is complete, in run order.
  std::function<void(const bench_row&)> row_done;
  // Called after row_done with the results so far: the context (less what is only known
  // at the end: the GPU's state then, the warnings) and every row run until now. `glabench
  // bench --json` rewrites its file with them, so that a run stopped part-way (a time
  // limit, a kill) leaves each row it finished.
  std::function<void(const bench_results&)> results_so_far;
  // Runs one configuration in a worker process, where set (the CLI sets it unless
  // --no-isolate): given the backend as the parent knows it and a request that a
  // bench_worker runs. Unset: in this process.
  std::function<bench_row(const loaded_backend&, const nlohmann::json& request)> run_isolated;
};

bench_results run_bench(const bench_options& opts);

// The configurations run_bench(opts) will run, in its order.
std::vector<bench_config> planned_configs(const bench_options& opts);

// In a worker process: runs the configurations the parent sends, one a request, keeping
// one session (inputs, reference heads, measured rates) across them as a run in one
// process does, so the timing is the same code either way.
class bench_worker {
 public:
  bench_worker();
  ~bench_worker();
  bench_row run(const loaded_backend& backend, const nlohmann::json& request);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace glabench
