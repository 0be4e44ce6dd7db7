#include "report_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "backend_build.hpp"
#include "markdown_cell.hpp"

namespace glabench {
namespace {

std::string pct(const std::optional<double>& f) {
  return f ? fmt::format("{:.3g}%", 100 * *f) : "–";
}

std::string worst_rel_l2(const bench_row& r) {
  if (r.checks.empty()) return "–";
  double worst = 0;
  for (const auto& c : r.checks) {
    if (!std::isfinite(c.rel_l2)) return "non-finite";
    worst = std::max(worst, c.rel_l2);
  }
  return fmt::format("{:.2e}", worst);
}

// A timed row's note: the noise target missed, the row's own note, and what the backend
// reported about its last timed call (backend_report), cut to about a line.
std::string timed_note(const bench_row& r) {
  std::string note = r.noise_target_met ? "" : "noise target not met (time or rep cap)";
  auto add = [&](const std::string& part) { note += (note.empty() ? "" : "; ") + part; };
  if (!r.message.empty()) add(r.message);
  if (r.backend_report.is_object()) {
    constexpr size_t kMax = 120;
    std::string text =
        r.backend_report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kMax) {
      size_t cut = kMax;
      while (cut > 0 && (text[cut] & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
      text = text.substr(0, cut) + "…";
    }
    add("backend report: " + text);
  }
  return note;
}

// How each backend was built (context.backend_builds, backend_build.hpp) and the run's
// warnings (a timed backend built without optimisation), where the file has them.
void write_backend_builds(std::ostream& out, const nlohmann::json& c) {
  if (auto b = c.find("backend_builds"); b != c.end() && b->is_object() && !b->empty()) {
    std::string list;
    for (const auto& [name, build] : b->items()) {
      std::string summary;
      try {
        summary = backend_build_from_json(build).summary();
      } catch (const nlohmann::json::exception&) {
        summary = build.dump();
      }
      if (auto v = build.find("version"); v != build.end() && v->is_string())
        summary += ", version " + v->get<std::string>();
      list += fmt::format("{}`{}` ({})", list.empty() ? "" : "; ", console_safe(name),
                          console_safe(summary));
    }
    out << fmt::format("- backends built: {}\n", list);
  }
  if (auto w = c.find("warnings"); w != c.end() && w->is_array())
    for (const auto& text : *w)
      out << fmt::format("- **warning:** {}\n",
                         console_safe(text.is_string() ? text.get<std::string>() : text.dump()));
}

void write_run(std::ostream& out, const named_results& run) {
  const nlohmann::json& c = run.results.context;
  auto get = [&](const char* key) {
    auto it = c.find(key);
    if (it == c.end()) return std::string("?");
    // Strings read from the results file (and its path) are escaped: safe_text.hpp.
    return console_safe(it->is_string() ? it->get<std::string>() : it->dump());
  };
  out << fmt::format("## {}\n\n", console_safe(run.path));
  out << fmt::format("- device: **{}**", get("device"));
  if (c.contains("driver"))
    out << fmt::format(" (driver {}, CUDA runtime {}, {} SMs, SM clock max {} MHz)", get("driver"),
                       get("cuda_runtime_version"), get("sm_count"), get("sm_clock_max_mhz"));
  for (const char* when : {"gpu_state_start", "gpu_state_end"})
    if (c.contains(when) && c[when].contains("sm_clock_mhz"))
      out << fmt::format(
          "\n- GPU at the {} of the run: SM clock {} MHz, {} °C, {} W, clock-event "
          "reasons {}",
          when == std::string("gpu_state_start") ? "start" : "end", c[when]["sm_clock_mhz"].dump(),
          c[when].value("temperature_c", 0u), c[when].value("power_w", 0.0),
          console_safe(c[when].value("clock_event_reasons", "?")));
  out << fmt::format("\n- host: {} ({} threads)\n- glabench {} · commit `{}` · build {} · {}\n",
                     get("host_cpu"), get("host_cpus"), get("glabench_version"), get("git_commit"),
                     get("build_type"), get("date"));
  write_backend_builds(out, c);
  for (const auto& [where, p] : run.results.peaks) {
    std::string gemm;
    for (const auto& [dtype, rate] : p.gemm_tflops.items())
      gemm += fmt::format("{}{} {:.1f}", gemm.empty() ? "" : ", ", console_safe(dtype),
                          rate.get<double>());
    out << fmt::format("- measured peaks ({}): copy {} GB/s; GEMM TFLOP/s: {}  \n  _{}_\n",
                       console_safe(where), p.copy_gbps ? fmt::format("{:.0f}", *p.copy_gbps) : "–",
                       gemm.empty() ? "–" : gemm, console_safe(p.notes));
  }
  double wall_s = 0;
  for (const auto& r : run.results.rows) wall_s += r.wall_s.value_or(0);
  if (wall_s > 0)
    out << fmt::format(
        "- {} configurations in {:.0f} s of wall time (setup, quick verify, "
        "sampling)\n",
        run.results.rows.size(), wall_s);
  // The copy floor: the time the call's essential bytes take at the measured copy
  // bandwidth (median × the fraction of it reached), the limit a kernel heads for.
  out << "\n| backend | op | dtype | mode | shape | status | median ms | p20–p80 ms | cv | "
         "reps | GB/s | copy floor ms | % copy BW | TFLOP/s | % GEMM | worst rel_l2 | note |\n";
  out << "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> configurations
  for (const auto& r : run.results.rows) {
    const bench_config& k = r.config;
    if (r.status == bench_status::skipped) {
      skipped[r.message].push_back(k.name());
    } else if (r.stats) {
      const sample_summary& s = *r.stats;
      const std::string floor =
          r.bandwidth_fraction ? fmt::format("{:.4g}", s.median * *r.bandwidth_fraction) : "–";
      out << fmt::format(
          "| {} | {} | {} | {} | {} | {} | {:.4g} | {:.4g}–{:.4g} | {:.2f}% | {} | {:.1f} | {} | "
          "{} | {:.3g} | {} | {} | {} |\n",
          markdown_cell(k.backend), markdown_cell(k.op), markdown_cell(k.dtype),
          markdown_cell(k.mode), markdown_cell(k.label()), bench_status_name(r.status), s.median,
          s.p20, s.p80, 100 * s.cv, s.n, r.gbps.value_or(0), floor, pct(r.bandwidth_fraction),
          r.tflops.value_or(0), pct(r.flop_fraction), worst_rel_l2(r),
          markdown_cell(timed_note(r)));
    } else {
      out << fmt::format(
          "| {} | {} | {} | {} | {} | **{}** | – | – | – | – | – | – | – | – | – | {} | {} |\n",
          markdown_cell(k.backend), markdown_cell(k.op), markdown_cell(k.dtype),
          markdown_cell(k.mode), markdown_cell(k.label()), bench_status_name(r.status),
          worst_rel_l2(r), markdown_cell(r.message));
    }
  }
  if (!skipped.empty()) {
    out << "\nSkipped:\n\n";
    for (const auto& [reason, names] : skipped) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "`" : ", `") + console_safe(n) + "`";
      out << fmt::format("- {} ({}): {}\n", console_safe(reason), names.size(), list);
    }
  }
  out << "\n";
}

// The device a run names in its context ("" when it names none).
std::string device_of(const named_results& run) {
  const auto it = run.results.context.find("device");
  return it != run.results.context.end() && it->is_string() ? it->get<std::string>() : "";
}

// Speed-ups pair a baseline row with every other backend's row of the same configuration,
// from the same file or from another file that names the same device — a run of another
// build in the same device call, say.
void write_speedups(std::ostream& out, const std::vector<named_results>& runs,
                    const std::string& baseline) {
  struct line {
    std::string backend, config;
    double base_ms, ms;
  };
  std::vector<line> lines;
  for (const auto& base_run : runs)
    for (const auto& b : base_run.results.rows) {
      if (b.config.backend != baseline || !b.stats) continue;
      for (const auto& run : runs) {
        if (&run != &base_run && (device_of(run).empty() || device_of(run) != device_of(base_run)))
          continue;
        for (const auto& r : run.results.rows) {
          bench_config same = r.config;
          same.backend = baseline;
          if (r.config.backend == baseline || !r.stats || !(same == b.config)) continue;
          lines.push_back({r.config.backend,
                           fmt::format("{} {} {} {}", r.config.op, r.config.dtype, r.config.mode,
                                       markdown_cell(r.config.label())),
                           b.stats->median, r.stats->median});
        }
      }
    }
  out << fmt::format("## Speed-up over {}\n\n", console_safe(baseline));
  if (lines.empty()) {
    out << fmt::format(
        "No configuration was timed for both {} and another backend in the same run or on "
        "the same device.\n\n",
        console_safe(baseline));
    return;
  }
  out << fmt::format("| backend | configuration | {} ms | backend ms | speed-up |\n",
                     markdown_cell(baseline));
  out << "|---|---|---:|---:|---:|\n";
  for (const auto& l : lines)
    out << fmt::format("| {} | {} | {:.4g} | {:.4g} | {:.3g}× |\n", markdown_cell(l.backend),
                       markdown_cell(l.config), l.base_ms, l.ms, l.base_ms / l.ms);
  out << "\n";
}

}  // namespace

std::string report_printer::default_baseline(const std::vector<named_results>& runs) {
  std::set<std::string> names;
  for (const auto& run : runs)
    for (const auto& r : run.results.rows) names.insert(r.config.backend);
  if (names.count("naive_recurrent")) return "naive_recurrent";
  return names.empty() ? "" : *names.begin();
}

void report_printer::print_markdown(std::ostream& out, const std::vector<named_results>& runs,
                                    const std::string& baseline,
                                    const std::map<std::string, std::string>& plots,
                                    const std::map<std::string, std::string>& missing_plots) {
  out << "# glabench report\n\n";
  out << "Times are medians over samples, each one call (fwd) or forward + backward (fwdbwd) "
         "timed on the backend's stream after a cache flush; a configuration is timed only "
         "after its quick verify passed. Throughput divides the op's essential bytes and FLOPs "
         "(README, \"Benchmarking\") by the median; % columns are of the peaks measured in the "
         "same run.\n\n";
  for (const auto& run : runs) write_run(out, run);
  write_speedups(out, runs, baseline);
  const std::pair<const char*, const char*> titles[] = {
      {"time_vs_t", "Time against T"},
      {"time_by_shape", "Time per shape"},
      {"speedup", "Speed-up over the baseline"},
      {"peak_fraction", "Fraction of the measured peaks"},
      {"time_vs_regime", "Time against the gate regime"},
      {"accuracy", "Accuracy (quick verify)"}};
  out << "## Plots\n\n";
  for (const auto& [name, title] : titles) {
    out << fmt::format("### {}\n\n", title);
    if (auto it = plots.find(name); it != plots.end())
      out << fmt::format("![{}]({})\n\n", title, console_safe(it->second));
    else if (auto m = missing_plots.find(name); m != missing_plots.end())
      out << fmt::format("Not drawn: {}.\n\n", console_safe(m->second));
  }
}

}  // namespace glabench
