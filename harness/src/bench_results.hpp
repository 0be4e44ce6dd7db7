// The results of `glabench bench`, in memory and as JSON.
//
// The file is Google Benchmark's JSON layout — a "context" object and a "benchmarks"
// array whose entries carry name, run_name, run_type, repetitions, iterations,
// real_time, cpu_time and time_unit — so tools that read Google Benchmark output can
// read it; glabench's own fields sit beside those: the configuration, the status, the
// verification, every sample, the statistics and the throughput, the devices the backend
// was given ("devices") and what the backend said about its last timed call
// ("backend_report", ABI 1.2). context.glabench_results = "bench" and
// context.schema_version mark the file as ours.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "statistics.hpp"
#include "tensor_check.hpp"

namespace glabench {

inline constexpr int kBenchSchemaVersion = 1;

enum class bench_status {
  ok,       // verified, then timed
  failed,   // the quick verify failed or the backend returned an error: no time
  skipped,  // unsupported, not runnable here, too large for memory, or too slow for the caps
  crashed,  // the worker running it died (a signal or an exit): no time
  timeout,  // a backend call ran past the time limit and its worker was killed: no time
};
std::string_view bench_status_name(bench_status s);
// Failed, crashed or timed out: no time, and `glabench bench` exits 1.
bool is_failure(bench_status s);

// What one configuration is: the key `glabench compare` matches rows by.
struct bench_config {
  std::string backend, op, dtype, mode;  // mode: "fwd" or "fwdbwd"
  int64_t B = 0, T = 0, H = 0, K = 0, V = 0;
  bool hot = false;  // caches left warm between samples (--hot)
  // How many devices the backend was given (--devices). Part of the key, so that a 2-GPU
  // run is never matched with a 1-GPU run; which devices is not (bench_row::devices):
  // devices 2,3 of a machine compare with its devices 0,1.
  int32_t num_devices = 1;
  // softmax_attn's mask (--mask): causal, or full (no mask). gla and rwkv6 are causal by
  // nature: always true. Part of the key, so that a causal row is never matched with a
  // full one; files from before it was recorded hold causal rows only.
  bool causal = true;
  // The gate regime the inputs were drawn from (--gates, gate_regime.hpp) for ops with
  // gates (gla, rwkv6); empty for softmax_attn. gla and rwkv6 rows of files from before
  // it was recorded read as "mild".
  std::string gates;
  // How a sample was timed (--timing): "eager", the backend's calls as they come, host
  // launches included; or "graph", the calls captured once in a CUDA graph and each
  // sample a launch of it: device time. Files from before it was recorded: "eager".
  std::string timing = "eager";
  // A packed batch's sequence lengths (B = 1, summing to T: bench --shapes packed); empty
  // for B sequences of T tokens, and in files from before it was recorded.
  std::vector<int64_t> seqlens = {};

  std::string shape() const;  // "B4 T1024 H4 K100 V100", "B1 T16384 N16 H16 K128 V128"
  // "backend/op/dtype/mode/B4_T1024_H4_K100_V100[/x2][/hot][/full][/gates-R][/graph]
  // [/packed-N16-L…]": /xN for N > 1 devices, /full for a softmax_attn row without the
  // causal mask, /gates-R for an op with gates (its regime), /graph for graph timing, the
  // lengths of a packed batch's sequences.
  std::string name() const;
  // The shape and what else tells configurations of one shape apart, as the console
  // table and the report show them: "B4 T2048 H16 K128 V128 gates:fla graph" —
  // softmax_attn's mask, "×2 GPU" for several devices, "hot", the gate regime, "graph".
  std::string label() const;
  // "causal" or "full": what --mask calls it.
  std::string_view mask() const { return causal ? "causal" : "full"; }
  // The same, appended to `out` (a buffer reused for many rows allocates nothing).
  void append_shape(std::string& out) const;
  void append_name(std::string& out) const;
  bool operator==(const bench_config&) const = default;
};
// To match rows by configuration through a hash table: O(n) on average.
struct bench_config_hash {
  size_t operator()(const bench_config& c) const;
};

struct bench_row {
  bench_config config;
  bench_status status = bench_status::ok;
  std::string ran_on = "host";          // "cuda" or "host": the peaks its fractions refer to
  std::string message;                  // the error or skip reason; notes
  std::vector<tensor_check> checks;     // the quick verify on these inputs
  std::vector<double> samples_ms;       // every timed sample, in run order
  std::optional<sample_summary> stats;  // over samples_ms (status ok)
  double bytes = 0, flops = 0;          // the op's essential traffic and arithmetic per call
  std::optional<double> gbps, tflops;   // achieved, from the median
  std::optional<double> bandwidth_fraction, flop_fraction;  // of the measured peaks
  bool noise_target_met = false;  // stopped on the noise target rather than on a cap
  // Wall time spent on this configuration: setup, quick verify (with the reference on
  // the sampled heads when computed for it) and sampling. Absent in files from before
  // it was recorded.
  std::optional<double> wall_s;
  // The devices the backend was given (--devices), in order; config.num_devices is their
  // count. [0] in files from before they were recorded.
  std::vector<int32_t> devices{0};
  // What the backend said about its last timed call (ABI 1.2 last_call_report, e.g.
  // {"rank_ms": […], "comm_hidden_fraction": 0.93}): a JSON object, or null when it said
  // nothing. A report that is not a JSON object is left out, and the row's message
  // says so ("backend_report ignored: …").
  nlohmann::json backend_report;
  // The outputs of the last timed call against the quick verify's, on the same inputs
  // (every element of every output): identical bit for bit, or else their largest
  // rel_l2. Absent (nullopt) where no timed call ran or in files from before it was
  // checked. A difference over the dtype's threshold, or a NaN, fails the row.
  std::optional<bool> timed_outputs_identical;
  std::optional<double> timed_outputs_rel_l2;
};

// Peak rates measured once per run on the device the backends ran on.
struct measured_peaks {
  std::optional<double> copy_gbps;  // device-to-device (or host memcpy) read+write bandwidth
  nlohmann::json gemm_tflops = nlohmann::json::object();  // dtype name -> TFLOP/s (cuBLAS)
  std::string notes;  // how they were measured, or why one is missing
};
// The peaks of the place a row's backend ran: "cuda" for CUDA backends, else "host".
std::string peaks_key(bool cuda);

// Rows of a vector by configuration, for matching and for finding repeats: an
// open-addressing hash table of indices into `rows` that keeps each configuration's hash
// beside its index, so a lookup reads a row only where the hashes match (compare looks up
// 200,000 rows a side; a node-based table cost several times more). `rows` must outlive
// the index and not move; rows may be appended to it between insertions.
class config_index {
 public:
  static constexpr size_t npos = size_t(-1);
  explicit config_index(const std::vector<bench_row>& rows, size_t expected = 0);
  // Indexes rows[i] under its configuration. Returns the index that configuration had
  // (npos if none): the new row replaces it, so a lookup finds the last one.
  size_t insert(size_t i);
  // The index of the row with configuration c (the last inserted), or npos.
  size_t find(const bench_config& c) const;
  void clear();

 private:
  struct slot {
    size_t hash = 0;
    size_t index = npos;  // npos: empty
  };
  size_t probe(const bench_config& c, size_t hash) const;  // its slot, or the empty one
  void grow();
  const std::vector<bench_row>* rows_;
  std::vector<slot> slots_;  // a power of two, at most half full
  size_t size_ = 0;
};

struct bench_results {
  nlohmann::json context = nlohmann::json::object();  // device, driver, clocks, commit, …
  std::map<std::string, measured_peaks> peaks;        // "cuda" and/or "host": where rows ran
  std::vector<bench_row> rows;
};

// A results file that is unreadable, not ours, or breaks the schema. The message names
// the file, the field and the rule.
class results_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const bench_results& r);
// `source` names the file in error messages.
bench_results bench_results_from_json(const nlohmann::json& j, const std::string& source);
bench_results read_bench_results(const std::string& path);
// The whole text of a results file, read once (a pipe or FIFO too): what
// read_bench_results parses. Throws results_error naming the file.
std::string read_results_text(const std::string& path);
// The text of a results file: what read_bench_results reads, with the same checks and
// messages as bench_results_from_json, in one streaming pass that never holds the rows
// as JSON objects (several times faster on a file of many rows).
bench_results bench_results_from_text(const std::string& text, const std::string& source);

}  // namespace glabench
