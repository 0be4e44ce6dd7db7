// glabench_time — the interim GPU timing tool until `glabench bench` lands: times a
// CUDA backend through the plugin ABI on random gla inputs (gates from log σ of
// normal draws, never zeros). Per configuration: inputs uploaded once; 5 warm-up
// calls; then each sample clears a buffer twice the L2 size on the stream (so no
// input is L2-resident) and times only the backend call(s) with CUDA events;
// reports median, p20, p80 and min over the samples.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backend_runner.hpp"
#include "glabench/reference/random_inputs.hpp"
#include "run_context.hpp"

namespace {

using namespace glabench;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct sample_stats {
  double median_ms, p20_ms, p80_ms, min_ms;
};

sample_stats summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto q = [&](double f) { return ms[static_cast<size_t>(f * (ms.size() - 1) + 0.5)]; };
  return {q(0.5), q(0.2), q(0.8), ms.front()};
}

std::vector<int64_t> parse_shape(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) v.push_back(std::stoll(part));
  if (v.size() != 5) throw std::invalid_argument("--shape wants B,T,H,K,V, got '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"glabench_time: CUDA-event timing of one backend through the plugin ABI"};
  std::string backend_name, json_out;
  std::vector<std::string> shapes, dtypes = {"fp32", "bf16"}, modes = {"fwd", "fwdbwd"}, libs;
  int samples = 30;
  app.add_option("--backend", backend_name)->required();
  app.add_option("--shape", shapes, "B,T,H,K,V (repeatable)")->required();
  app.add_option("--dtype", dtypes);
  app.add_option("--mode", modes, "fwd, fwdbwd");
  app.add_option("--samples", samples);
  app.add_option("--backend-lib", libs);
  app.add_option("--json", json_out);
  CLI11_PARSE(app, argc, argv);

  try {
    const backend_registry reg = discover_backends(GLABENCH_DEFAULT_BACKEND_DIR, libs);
    const loaded_backend* backend = reg.find(backend_name);
    if (!backend)
      throw std::invalid_argument("unknown backend '" + backend_name + "' (found: " + reg.names() +
                                  ")");
    int l2_bytes = 0;
    check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0), "L2 size");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "device properties");

    nlohmann::json rows = nlohmann::json::array();
    fmt::print("{:<24} {:<5} {:<7} {:>10} {:>10} {:>10} {:>10}\n", "shape", "dtype", "mode",
               "median_ms", "p20_ms", "p80_ms", "min_ms");
    for (const auto& shape_text : shapes) {
      const auto s = parse_shape(shape_text);
      const problem p{op_kind::gla, s[0], s[1], s[2], s[3], s[4], 1.0 / std::sqrt(double(s[3])),
                      true};
      random_problem_options opts;
      opts.seed = 20261121;
      const op_inputs inputs = make_random_inputs(p, opts);
      for (const auto& dtype_text : dtypes) {
        const dtype d = parse_dtype(dtype_text).value();
        for (const auto& mode : modes) {
          const bool with_backward = mode == "fwdbwd";
          backend_runner runner(*backend, p, d, true, with_backward);
          runner.prepare(inputs, with_backward);
          device_buffer flush(runner.context(), 2 * size_t(l2_bytes));
          auto stream = static_cast<cudaStream_t>(runner.context().stream());
          auto call = [&] {
            runner.launch_forward();
            if (with_backward) runner.launch_backward();
          };
          for (int w = 0; w < 5; ++w) call();
          cudaEvent_t start, stop;
          check(cudaEventCreate(&start), "event");
          check(cudaEventCreate(&stop), "event");
          std::vector<double> ms;
          for (int n = 0; n < samples; ++n) {
            check(cudaMemsetAsync(flush.data(), n & 0xff, flush.bytes(), stream), "L2 flush");
            check(cudaEventRecord(start, stream), "record");
            call();
            check(cudaEventRecord(stop, stream), "record");
            check(cudaEventSynchronize(stop), "sync");
            float elapsed = 0;
            check(cudaEventElapsedTime(&elapsed, start, stop), "elapsed");
            ms.push_back(elapsed);
          }
          cudaEventDestroy(start);
          cudaEventDestroy(stop);
          const sample_stats st = summarize(ms);
          fmt::print("{:<24} {:<5} {:<7} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f}\n", shape_text,
                     dtype_text, mode, st.median_ms, st.p20_ms, st.p80_ms, st.min_ms);
          rows.push_back({{"backend", backend_name},
                          {"shape", shape_text},
                          {"dtype", dtype_text},
                          {"mode", mode},
                          {"samples", samples},
                          {"median_ms", st.median_ms},
                          {"p20_ms", st.p20_ms},
                          {"p80_ms", st.p80_ms},
                          {"min_ms", st.min_ms},
                          {"all_ms", ms}});
        }
      }
    }
    if (!json_out.empty()) {
      nlohmann::json context = run_context();
      context["device"] = prop.name;
      context["sm_count"] = prop.multiProcessorCount;
      context["l2_bytes"] = l2_bytes;
      write_json_file(json_out,
                      {{"glabench_results", "time"}, {"context", context}, {"results", rows}});
    }
  } catch (const std::exception& e) {
    std::cerr << "glabench_time: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
