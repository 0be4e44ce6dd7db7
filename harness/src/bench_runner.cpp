#include "bench_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "backend_runner.hpp"
#include "bench_device.hpp"
#include "bench_host_memory.hpp"
#include "bench_shapes.hpp"
#include "call_watch.hpp"
#include "captured_call.hpp"
#include "device_info.hpp"
#include "gate_regime.hpp"
#include "glabench/launcher.hpp"
#include "glabench/reference/random_inputs.hpp"
#include "json_depth.hpp"
#include "json_fields.hpp"
#include "nvml_reader.hpp"
#include "op_cost.hpp"
#include "peak_rates.hpp"
#include "quick_verify.hpp"
#include "rank_agreement.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"

namespace glabench {

namespace {

using clock_type = std::chrono::steady_clock;

struct job {
  const loaded_backend* backend;
  problem prob;
  size_t shape_index;
  dtype storage;
  bool with_backward;
  bench_config config;
  op_cost cost;
  gate_kind gates = gate_kind::logsigmoid;
};

// `causal`: softmax_attn's mask (gla and rwkv6 are causal: always true for them). A full
// mask's cost is the whole T×T, a causal one's half (op_cost.hpp). `gates`: a regime's
// name, ignored for an op without gates; `timing`: eager or graph.
job make_job(const loaded_backend* b, op_kind op, const bench_shape& sh, size_t shape_index,
             dtype d, const std::string& mode, bool causal, bool hot, size_t num_devices,
             const std::string& gates, const std::string& timing) {
  causal = causal || op != op_kind::softmax_attn;
  problem p{op, sh.B, sh.T, sh.H, sh.K, sh.V, 1.0 / std::sqrt(double(sh.K)), causal, {}};
  if (!sh.seqlens.empty()) {  // a packed batch: its offsets, checked as any other's
    p.cu_seqlens = packed_offsets(sh.seqlens);
    check_cu_seqlens(p);
  }
  const gate_regime* regime = p.has_gate() ? find_gate_regime(gates) : nullptr;
  if (p.has_gate() && !regime)
    throw std::invalid_argument("bench job: unknown gate regime '" + gates + "'");
  job j{b, p, shape_index, d, mode == "fwdbwd", {}, {}};
  j.config = {b->name(),
              std::string(op_name(op)),
              std::string(dtype_name(d)),
              mode,
              sh.B,
              sh.T,
              sh.H,
              sh.K,
              sh.V,
              hot,
              int32_t(num_devices),
              causal,
              regime ? gates : "",
              timing,
              sh.seqlens};
  if (regime) j.gates = regime->kind;
  j.cost = essential_cost(p, dtype_bytes(d), dtype_bytes(b->state_dtype(d)), p.has_state(),
                          j.with_backward);
  return j;
}

// What a worker needs to rebuild a job (the backend is the worker's own): a bench
// request's "job", written by the parent and read by the worker by one description.
struct job_request {
  std::string op, dtype, mode, gates, timing;
  bench_shape shape;
  size_t shape_index = 0;
  bool causal = true;
};
constexpr auto job_request_fields = [](auto& f, auto& r) {
  f("op", r.op);
  size_fields(f, r.shape);
  f("seqlens", r.shape.seqlens);
  f("shape_index", r.shape_index);
  f("dtype", r.dtype);
  f("mode", r.mode);
  f("causal", r.causal);
  f("gates", r.gates);
  f("timing", r.timing);
};

job_request request_of(const job& j) {
  return {j.config.op,     j.config.dtype,
          j.config.mode,   j.config.gates,
          j.config.timing, {j.prob.B, j.prob.T, j.prob.H, j.prob.K, j.prob.V, j.config.seqlens},
          j.shape_index,   j.prob.causal};
}

// The options a worker's session runs with: a bench request's "options".
constexpr auto worker_options_fields = [](auto& f, auto& o) {
  f("hot", o.hot);
  f("warmup", o.warmup);
  f("noise_target", o.stopping.noise_target);
  f("min_reps", o.stopping.min_reps);
  f("max_reps", o.stopping.max_reps);
  f("time_cap_s", o.stopping.time_cap_s);
  f("max_call_s", o.max_call_s);
  f("seed", o.seed);
  f("modes", o.modes);
  f("devices", o.devices);
};

std::vector<job> plan_jobs(const bench_options& opts) {
  std::vector<job> jobs;
  const std::vector<op_kind> all_ops = {op_kind::gla, op_kind::rwkv6, op_kind::softmax_attn};
  const std::vector<std::string> causal_only = {"causal"}, no_gates = {""};
  for (const loaded_backend* b : opts.backends)
    for (op_kind op : opts.ops.empty() ? all_ops : opts.ops) {
      // Ops asked for by name are listed (skipped where missing); by default only the
      // ops the backend has.
      const std::vector<dtype> forward_dtypes = b->forward_dtypes(op);
      if (opts.ops.empty() && forward_dtypes.empty()) continue;
      const std::vector<dtype> dtypes = opts.dtypes.empty() ? forward_dtypes : opts.dtypes;
      for (size_t s = 0; s < opts.shapes.size(); ++s) {
        const bench_shape& sh = opts.shapes[s];
        const bool repeated =
            std::any_of(opts.shapes.begin(), opts.shapes.begin() + s, [&](const bench_shape& o) {
              return std::tie(o.B, o.T, o.H, o.K, o.V, o.seqlens) ==
                     std::tie(sh.B, sh.T, sh.H, sh.K, sh.V, sh.seqlens);
            });
        if (repeated) continue;  // shape sets overlap (t-sweep and fla share B4 T2048)
        // softmax_attn once per mask; gla and rwkv6 once per gate regime.
        const bool per_mask = op == op_kind::softmax_attn && !opts.masks.empty();
        const bool gated = op != op_kind::softmax_attn;
        for (const std::string& mask : per_mask ? opts.masks : causal_only)
          for (const std::string& gates : gated ? opts.gates : no_gates)
            for (dtype d : dtypes)
              for (const std::string& mode : opts.modes)
                for (const std::string& timing : opts.timings)
                  jobs.push_back(make_job(b, op, sh, s, d, mode, mask != "full", opts.hot,
                                          opts.devices.size(), gates, timing));
      }
    }
  // Smallest work first within each op, then by gate regime, so that one input set (and
  // its reference) serves every backend and dtype of a shape and regime, and a slow
  // backend's measured rate can rule out larger shapes.
  const auto regime_of = [&opts](const job& j) {
    return std::find(opts.gates.begin(), opts.gates.end(), j.config.gates) - opts.gates.begin();
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const job& a, const job& b) {
    const double fa = a.prob.B * a.prob.T * a.prob.H * a.prob.K * double(a.prob.V);
    const double fb = b.prob.B * b.prob.T * b.prob.H * b.prob.K * double(b.prob.V);
    return std::tuple(a.prob.op, fa, a.shape_index, regime_of(a)) <
           std::tuple(b.prob.op, fb, b.shape_index, regime_of(b));
  });
  return jobs;
}

// What one run shares between configurations: the current inputs (per op, shape and
// gate regime), the reference on their sampled heads (per dtype and mask), and each
// (backend, op, dtype, mode, mask, timing)'s measured seconds per flop.
class bench_session {
 public:
  explicit bench_session(const bench_options& opts) : opts_(opts), agree_(opts.devices.front()) {}

  bench_row run(const job& j);

 private:
  const op_inputs& inputs_for(const job& j);
  // Whether the reference carries gradients: once any fwdbwd configuration may ask.
  bool reference_gradients() const {
    return std::count(opts_.modes.begin(), opts_.modes.end(), "fwdbwd") > 0;
  }
  const std::vector<expected_head>& expected_for(const job& j);
  void sample(const job& j, backend_runner& runner, captured_call* graph, bool collective,
              bench_device& dev, bench_row& row);

  const bench_options& opts_;
  rank_agreement agree_;  // bench across processes: the decisions every rank takes
  std::optional<std::tuple<op_kind, size_t, std::string>> inputs_key_;
  op_inputs inputs_;
  // By (dtype, state dtype, causal).
  std::map<std::tuple<dtype, dtype, bool>, std::vector<expected_head>> expected_;
  std::map<std::string, double> seconds_per_flop_;
};

const op_inputs& bench_session::inputs_for(const job& j) {
  const std::tuple<op_kind, size_t, std::string> key{j.prob.op, j.shape_index, j.config.gates};
  if (inputs_key_ != key) {
    inputs_ = {};
    expected_.clear();
    random_problem_options ro;
    ro.seed = opts_.seed + j.shape_index;
    ro.gates = j.gates;
    inputs_ = make_random_inputs(j.prob, ro);
    inputs_key_ = key;
  }
  return inputs_;
}

// Computed once per dtype, state dtype (fp32 states at 16-bit storage for a backend that
// keeps them: ABI 1.5) and mask (the inputs are the same for both masks, the reference is
// not), with gradients where reference_gradients().
const std::vector<expected_head>& bench_session::expected_for(const job& j) {
  const dtype state = j.backend->state_dtype(j.storage);
  const std::tuple<dtype, dtype, bool> key{j.storage, state, j.prob.causal};
  auto it = expected_.find(key);
  if (it == expected_.end()) {
    it = expected_
             .emplace(key, reference_heads(j.prob, inputs_for(j), j.storage, state,
                                           reference_gradients()))
             .first;
  }
  return it->second;
}

std::string gib(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / double(1 << 30));
}

// This rank's reason to skip a configuration, thrown inside a step the ranks agree on.
struct skip_reason : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_out_of_memory(const std::exception& e) {
  const std::string what = e.what();
  return dynamic_cast<const std::bad_alloc*>(&e) ||
         what.find("out of memory") != std::string::npos ||
         what.find("MemoryAllocation") != std::string::npos;
}

// What the backend says about its last timed call (ABI 1.2), kept when it is a JSON
// object; anything else leaves a note in the row's message, never a failure: the time
// stands.
void record_backend_report(backend_runner& runner, bench_row& row) {
  std::optional<std::string> text;
  try {
    text = runner.last_call_report();
  } catch (const backend_call_error& e) {
    row.message = std::string("backend_report ignored: ") + e.what();
    return;
  }
  if (!text) return;
  // The report lands in a results file whose own fields nest a few levels: it must stay
  // readable within kMaxJsonDepth there.
  constexpr std::size_t kMaxReportDepth = kMaxJsonDepth / 2;
  if (!json_depth_within(*text, kMaxReportDepth)) {
    row.message = "backend_report ignored: last_call_report nests objects or arrays deeper than " +
                  std::to_string(kMaxReportDepth) + " levels";
    return;
  }
  nlohmann::json report = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (report.is_object()) {
    row.backend_report = std::move(report);
    return;
  }
  const std::string start = text->substr(0, 60) + (text->size() > 60 ? "…" : "");
  row.message =
      report.is_discarded()
          ? "backend_report ignored: last_call_report wrote text that is not JSON: '" + start + "'"
          : std::string("backend_report ignored: last_call_report wrote a JSON ") +
                report.type_name() + ", not an object";
}

bench_row bench_session::run(const job& j) {
  bench_row row;
  row.config = j.config;
  row.devices = opts_.devices;
  row.bytes = j.cost.bytes;
  row.flops = j.cost.flops;
  const bool cuda = j.backend->table->device_type == kDLCUDA;
  row.ran_on = peaks_key(cuda);
  auto skip = [&](std::string why) {
    row.status = bench_status::skipped;
    row.message = std::move(why);
    return row;
  };
  auto fail = [&](std::string why) {
    row.status = bench_status::failed;
    row.message = std::move(why);
    row.samples_ms.clear();
    return row;
  };

  if (!j.backend->supports(j.prob.op, j.storage, GLABENCH_MODE_FORWARD))
    return skip(fmt::format("no {} forward in {}", op_name(j.prob.op), dtype_name(j.storage)));
  if (j.with_backward && !j.backend->supports(j.prob.op, j.storage, GLABENCH_MODE_BACKWARD))
    return skip(fmt::format("no {} backward in {}", op_name(j.prob.op), dtype_name(j.storage)));

  if (j.config.timing == "graph" && !cuda)
    return skip("--timing graph captures CUDA work: this backend runs on the host");
  const std::string rate_key =
      fmt::format("{}/{}/{}/{}/{}/{}", j.config.backend, j.config.op, j.config.dtype, j.config.mode,
                  j.config.mask(), j.config.timing);
  // Why this process would not run the configuration; across processes every rank must
  // agree to run it (their calls are collective).
  std::string not_here;
  if (auto it = seconds_per_flop_.find(rate_key); it != seconds_per_flop_.end()) {
    const double predicted = it->second * j.cost.flops;
    if (predicted > opts_.max_call_s)
      not_here = fmt::format(
          "one call would take about {:.1f} s (from smaller shapes), over --max-call-seconds {}",
          predicted, opts_.max_call_s);
  }
  // Across processes a CUDA backend's calls are collective, so a configuration runs, and
  // goes on past each step that could fail on one rank alone, only where every rank's does
  // (rank_agreement); elsewhere each rank decides alone.
  const bool collective = cuda && agree_.across_processes();
  const auto agreed = [&](const std::string& mine) {
    if (!collective) return mine;
    return agree_.all(mine.empty()) ? std::string()
           : mine.empty()           ? std::string("another rank does not go on")
                                    : mine;
  };
  // A step's exception as the row's verdict: failed, or skipped (a backend's refusal made
  // beforehand, running out of memory).
  struct verdict {
    bool failed = false;
    std::string why;
  };
  const auto verdict_of = [](const std::exception& e) {
    if (dynamic_cast<const skip_reason*>(&e)) return verdict{false, e.what()};
    if (const auto* b = dynamic_cast<const backend_call_error*>(&e); b && b->refused_beforehand())
      return verdict{false, e.what()};
    if (is_out_of_memory(e)) return verdict{false, std::string("out of memory: ") + e.what()};
    return verdict{true, e.what()};
  };
  const auto finish = [&](const verdict& v) { return v.failed ? fail(v.why) : skip(v.why); };
  // Runs `step`; its exception, or the other ranks' (agreed), ends the row.
  const auto agreed_step = [&](const auto& step) -> std::optional<verdict> {
    verdict mine;
    try {
      step();
    } catch (const std::exception& e) {
      mine = verdict_of(e);
      if (mine.why.empty()) mine.why = "an exception without a message";
    }
    if (std::string why = agreed(mine.why); !why.empty()) return verdict{mine.failed, why};
    return std::nullopt;
  };
  if (!collective && !not_here.empty()) return skip(not_here);
  const double host_need =
      bench_host_bytes(j.prob, dtype_bytes(j.storage), j.with_backward, reference_gradients());
  std::unique_ptr<backend_runner> runner;
  std::unique_ptr<bench_device> dev;
  // Setting up, up to and with the backend's prepare (which may join its ranks).
  if (auto v = agreed_step([&] {
        runner = std::make_unique<backend_runner>(*j.backend, j.prob, j.storage, true,
                                                  j.with_backward, opts_.devices);
        dev = make_bench_device(runner->context(), runner->device_ids());
        // The node's memory is shared by the launcher's processes on it, each holding its own.
        const int sharing = launcher::launcher_place().local_world;
        const double share = double(host_available_bytes()) / sharing;
        if (not_here.empty() && host_need > share)
          not_here = "needs about " + gib(host_need) + " of host memory, " + gib(share) +
                     " available" +
                     (sharing > 1 ? fmt::format(" to each of {} processes on this node", sharing)
                                  : std::string());
        if (not_here.empty() && cuda && 1.2 * j.cost.bytes > double(dev->free_bytes()))
          not_here = "needs about " + gib(1.2 * j.cost.bytes) + " of device memory, " +
                     gib(double(dev->free_bytes())) + " free";
        if (!not_here.empty()) throw skip_reason(not_here);
      }))
    return finish(*v);
  // prepare() and the quick verify's call are the configuration's first: warm-up calls,
  // which may compile, autotune or plan (a Triton kernel's first call at a shape), so the
  // watchdog holds them to --call-timeout rather than to --max-call-seconds' limit.
  if (auto v = agreed_step([&] {
        const warmup_scope warm;
        runner->prepare(inputs_for(j), j.with_backward);
      }))
    return finish(*v);

  double call_s = 0;
  std::optional<output_snapshot> verified;
  // One forward (and backward), its seconds.
  const auto time_one_call = [&] {
    const auto t0 = clock_type::now();
    runner->launch_forward();
    if (j.with_backward) runner->launch_backward();
    runner->context().synchronize();
    return std::chrono::duration<double>(clock_type::now() - t0).count();
  };
  // The quick verify: one call on these inputs, checked on the sampled heads.
  if (auto v = agreed_step([&] {
        const warmup_scope warm;
        runner->poison_outputs();
        call_s = time_one_call();
        runner->collect_outputs();  // untimed, like the rest of the quick verify
        // A write outside a tensor's bounds fails the row, naming the tensor. Checked after
        // the quick verify's call and after sampling, never inside a timed launch.
        runner->check_guards();
        row.checks = check_heads(
            j.prob, true, expected_for(j), default_tolerance(j.storage),
            [&](head_index at) {
              head_result r{runner->download_head_outputs(at.b, at.h), {}};
              if (j.with_backward) r.grads = runner->download_head_gradients(at.b, at.h);
              return r;
            },
            output_dtypes{j.storage, j.backend->state_dtype(j.storage)});
        for (const auto& c : row.checks)
          if (!c.passed)
            throw std::runtime_error(
                c.finite ? fmt::format("quick verify failed: {} rel_l2 {:.3g} > {:.3g}", c.tensor,
                                       c.rel_l2, c.threshold)
                         : fmt::format("quick verify failed: {} holds NaN or Inf", c.tensor));
        verified = runner->snapshot_outputs();
      }))
    return finish(*v);
  // A first call over --max-call-seconds may have paid for its setting up: a second one
  // decides, made by every rank where any rank's first was slow (the calls are collective).
  // The warm call's rate predicts larger shapes' calls.
  bool again = call_s > opts_.max_call_s;
  if (collective) again = !agree_.all(!again);
  const double first_s = call_s;
  if (again)
    if (auto v = agreed_step([&] {
          call_s = time_one_call();
          seconds_per_flop_[rate_key] = call_s / j.cost.flops;  // a skip still predicts
          if (call_s > opts_.max_call_s)
            throw skip_reason(fmt::format(
                "one call took {:.2f} s (the first {:.2f} s), over --max-call-seconds {}", call_s,
                first_s, opts_.max_call_s));
        }))
      return finish(*v);
  seconds_per_flop_[rate_key] = call_s / j.cost.flops;

  std::optional<captured_call> graph;
  const auto call = [&] {
    runner->launch_forward();
    if (j.with_backward) runner->launch_backward();
  };
  // Captured where every rank's capture worked (a capture makes no collective call).
  if (auto v = agreed_step([&] {
        try {
          if (j.config.timing == "graph") graph.emplace(runner->context().stream(), call);
        } catch (const graph_capture_error& e) {
          throw skip_reason(std::string("cannot be captured in a CUDA graph: ") + e.what());
        }
      }))
    return finish(*v);

  try {
    sample(j, *runner, graph ? &*graph : nullptr, collective, *dev, row);
    record_backend_report(*runner, row);
    runner->collect_outputs();
    const timed_outputs_check timed =
        check_timed_outputs(*verified, runner->snapshot_outputs(), default_tolerance(j.storage));
    row.timed_outputs_identical = timed.identical;
    row.timed_outputs_rel_l2 = timed.max_rel_l2;
    if (!timed.failure.empty()) return fail(timed.failure);
    // What the quick verify left unchecked (full attention's dk, dv at long T; rwkv6's du
    // over many sequences).
    if (std::string note = quick_verify_note(j.prob, expected_for(j), j.with_backward);
        !note.empty())
      row.message = row.message.empty() ? note : row.message + "; " + note;
    runner->check_guards();
    row.stats = summarize(row.samples_ms);
    const double median_s = row.stats->median / 1e3;
    row.gbps = row.bytes / median_s / 1e9;
    row.tflops = row.flops / median_s / 1e12;
    seconds_per_flop_[rate_key] = median_s / j.cost.flops;
  } catch (const std::exception& e) {
    return finish(verdict_of(e));
  }
  return row;
}

// Samples the call (or its captured graph) until the stop rule says enough: this rank's,
// or every rank's where the calls are collective.
void bench_session::sample(const job& j, backend_runner& runner, captured_call* graph,
                           bool collective, bench_device& dev, bench_row& row) {
  stopping_criterion stop(opts_.stopping);
  take_samples(
      dev, stop, opts_.warmup, opts_.hot, [&] { runner.poison_output_data(); },
      [&] {
        if (graph) {
          graph->launch();
          return;
        }
        runner.launch_forward();
        if (j.with_backward) runner.launch_backward();
      },
      [&](size_t n, double cv) {
        if (opts_.progress && n >= 2 && n % 10 == 0)
          opts_.progress(0, 0,
                         fmt::format("{} sample {} cv {:.2f}%", j.config.name(), n, 100 * cv));
      },
      [&](bool must, bool may) { return collective ? agree_.stop(must, may) : may; });
  row.samples_ms = stop.samples();
  row.noise_target_met = stop.noise_target_met();
}

// The row's throughput as fractions of the peaks measured in this run.
void add_peak_fractions(bench_row& row, const measured_peaks& peaks) {
  if (!row.gbps || !row.tflops) return;
  if (peaks.copy_gbps) row.bandwidth_fraction = *row.gbps / *peaks.copy_gbps;
  if (peaks.gemm_tflops.contains(row.config.dtype))
    row.flop_fraction = *row.tflops / peaks.gemm_tflops[row.config.dtype].get<double>();
}

// A warning for each backend that has a timed row and was built without optimisation,
// and for each timed row with a note (a backend_report that was not a JSON object, or
// what the quick verify left unchecked).
std::vector<std::string> timing_warnings(const std::vector<const loaded_backend*>& backends,
                                         const std::vector<bench_row>& rows) {
  std::vector<std::string> out;
  for (const loaded_backend* b : backends) {
    const bool timed = std::any_of(rows.begin(), rows.end(), [&](const bench_row& r) {
      return r.status == bench_status::ok && r.config.backend == b->name();
    });
    if (const std::string w = unoptimised_warning(b->name(), b->build); timed && !w.empty())
      out.push_back(w);
  }
  for (const bench_row& r : rows)
    if (r.status == bench_status::ok && !r.message.empty())
      out.push_back(r.config.name() + ": " + r.message);
  return out;
}

}  // namespace

struct bench_worker::state {
  bench_options opts;
  std::unique_ptr<bench_session> session;
};

bench_worker::bench_worker() : state_(std::make_unique<state>()) {}
bench_worker::~bench_worker() = default;

bench_row bench_worker::run(const loaded_backend& backend, const nlohmann::json& request) {
  if (!state_->session) {
    state_->opts = from_json_by<bench_options>(request.at("options"), worker_options_fields);
    state_->session = std::make_unique<bench_session>(state_->opts);
  }
  const auto r = from_json_by<job_request>(request.at("job"), job_request_fields);
  const auto op = parse_op(r.op);
  const auto d = parse_dtype(r.dtype);
  if (!op || !d) throw std::runtime_error("bench job: unknown op or dtype");
  return state_->session->run(make_job(&backend, *op, r.shape, r.shape_index, *d, r.mode, r.causal,
                                       state_->opts.hot, state_->opts.devices.size(), r.gates,
                                       r.timing));
}

std::vector<bench_config> planned_configs(const bench_options& opts) {
  std::vector<bench_config> out;
  for (const job& j : plan_jobs(opts)) out.push_back(j.config);
  return out;
}

bench_results run_bench(const bench_options& opts) {
  bench_results results;
  results.context = run_context(opts.backends);
  results.context["backend_builds"] = backend_builds(opts.backends);
  bool any_cuda = false;
  for (const auto* b : opts.backends) any_cuda = any_cuda || b->table->device_type == kDLCUDA;
  // The device described, whose peaks and GPU state are recorded: the first listed, where
  // the tensors live and the time is taken.
  const int first_device = opts.devices.empty() ? 0 : opts.devices.front();
  const run_device ran_on = describe_run_device(any_cuda, first_device);
  const bool on_gpu = ran_on.on_gpu;
  results.context.update(ran_on.context);
  results.context["bench_options"] = {{"noise_target", opts.stopping.noise_target},
                                      {"warmup", opts.warmup},
                                      {"min_reps", opts.stopping.min_reps},
                                      {"max_reps", opts.stopping.max_reps},
                                      {"time_cap_s", opts.stopping.time_cap_s},
                                      {"max_call_s", opts.max_call_s},
                                      {"hot", opts.hot},
                                      {"masks", opts.masks},
                                      {"gates", opts.gates},
                                      {"timings", opts.timings},
                                      {"seed", opts.seed},
                                      {"devices", opts.devices}};

  const std::vector<job> jobs = plan_jobs(opts);
  bench_session session(opts);
  auto peaks_for = [&](bool cuda) -> const measured_peaks& {
    const std::string key = peaks_key(cuda);
    if (!results.peaks.count(key))
      results.peaks[key] = cuda ? measure_cuda_peaks(first_device) : measure_host_peaks();
    return results.peaks[key];
  };
  if (on_gpu) {
    // The peaks first: their copies and GEMMs also bring the GPU out of idle, so the
    // state recorded next shows the clocks the benchmarks start at.
    peaks_for(true);
    results.context["gpu_state_start"] = read_gpu_state(first_device);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const job& j = jobs[i];
    if (opts.progress) opts.progress(i + 1, jobs.size(), j.config.name());
    // Measured before the configuration's own work, as the first of its kind. Without a
    // GPU there is nothing to measure for a CUDA backend, whose row says it cannot run.
    const bool cuda_job = j.backend->table->device_type == kDLCUDA;
    const measured_peaks no_peaks;
    const measured_peaks& peaks = cuda_job && !on_gpu ? no_peaks : peaks_for(cuda_job);
    const auto start = clock_type::now();
    results.rows.push_back(
        opts.run_isolated
            ? opts.run_isolated(*j.backend,
                                {{"options", to_json_by(opts, worker_options_fields)},
                                 {"job", to_json_by(request_of(j), job_request_fields)}})
            : session.run(j));
    bench_row& row = results.rows.back();
    if (row.config.backend.empty()) {  // a row its worker did not make (lost, failed, skipped)
      row.config = j.config;
      row.devices = opts.devices;
      row.bytes = j.cost.bytes;
      row.flops = j.cost.flops;
      row.ran_on = peaks_key(j.backend->table->device_type == kDLCUDA);
    }
    row.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
    add_peak_fractions(row, peaks);
    if (opts.row_done) opts.row_done(row);
    if (opts.results_so_far) opts.results_so_far(results);
  }
  if (on_gpu) results.context["gpu_state_end"] = read_gpu_state(first_device);
  const std::vector<std::string> warnings = timing_warnings(opts.backends, results.rows);
  if (!warnings.empty()) results.context["warnings"] = warnings;
  return results;
}

}  // namespace glabench
