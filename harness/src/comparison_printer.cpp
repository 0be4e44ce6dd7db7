#include "comparison_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>

#include "markdown_cell.hpp"
#include "safe_text.hpp"

namespace glabench {
namespace {

using text_buffer = fmt::memory_buffer;

void put(text_buffer& buf, std::string_view s) {
  buf.append(s.data(), s.data() + s.size());
}

// Printable ASCII, which console_safe and json_safe keep as it is (safe_text.hpp): the
// common case, written without a copy.
bool printable_ascii(std::string_view s) {
  for (const char c : s)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

// markdown_cell(text), appended.
void put_cell(text_buffer& buf, std::string_view text) {
  if (!printable_ascii(text)) return put(buf, markdown_cell(text));
  for (const char c : text) buf.push_back(c == '|' ? '/' : c);
}

void put_ms(text_buffer& buf, const bench_row* r) {
  if (!r || !r->stats) return put(buf, "–");
  fmt::format_to(std::back_inserter(buf), "{:.4g}", r->stats->median);
}

void put_noise(text_buffer& buf, const bench_row* r) {
  if (!r || !r->stats) return put(buf, "–");
  fmt::format_to(std::back_inserter(buf), "{:.1f}%", 100 * relative_noise(*r->stats));
}

// "2 rows SLOWER by more than 5% (a: +30.0%, b: +12.0%)": at most 10 named.
std::string gate_rows(const std::vector<gate_row>& rows, const std::string& what) {
  constexpr size_t kNamed = 10;
  std::string names;
  for (size_t i = 0; i < rows.size() && i < kNamed; ++i) {
    names += i ? ", " : "";
    names += console_safe(rows[i].name);
    if (rows[i].ratio) names += fmt::format(": {:+.1f}%", 100 * (*rows[i].ratio - 1));
  }
  if (rows.size() > kNamed) names += fmt::format(", and {} more", rows.size() - kNamed);
  return fmt::format("{} row{} {} ({})", rows.size(), rows.size() == 1 ? "" : "s", what, names);
}

}  // namespace

std::string comparison_printer::verdict_line(const gate_verdict& g) {
  const std::string rule = fmt::format("--fail-on-regression {}%", g.rule.fail_pct);
  const std::string over = fmt::format("SLOWER by more than {}%", g.rule.fail_pct);
  std::vector<std::string> parts;
  if (!g.slower.empty()) parts.push_back(gate_rows(g.slower, over));
  if (!g.broken.empty())
    parts.push_back(gate_rows(g.broken, "BROKEN (timed in the base, failing now)"));
  if (!g.gone.empty())
    parts.push_back(gate_rows(g.gone, "timed in the base GONE (pass --allow-missing to allow)"));
  if (!g.skipped.empty())
    parts.push_back(
        gate_rows(g.skipped, "timed in the base SKIPPED (pass --allow-missing to allow)"));
  if (g.compared == 0) parts.push_back("no row was timed in both runs: nothing was compared");
  std::string line = fmt::format("verdict: {} — {}{}: ", g.passed() ? "PASS" : "FAIL", rule,
                                 g.rule.allow_missing ? " --allow-missing" : "");
  if (parts.empty())
    line += fmt::format("{} row{} timed in both runs, none {}, BROKEN, GONE or SKIPPED", g.compared,
                        g.compared == 1 ? "" : "s", over);
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? "; " : "") + parts[i];
  if (!g.excused.empty())
    line += "; allowed by --allow-missing: " +
            gate_rows(g.excused, "timed in the base GONE or SKIPPED");
  return line;
}

namespace {

// Each backend's version string as a results file records it (context.backend_builds,
// backend_build.hpp); files older than that record none.
std::map<std::string, std::string> versions_of(const nlohmann::json& ctx) {
  std::map<std::string, std::string> out;
  const auto builds = ctx.find("backend_builds");
  if (builds == ctx.end() || !builds->is_object()) return out;
  for (const auto& [name, build] : builds->items())
    if (const auto v = build.find("version"); v != build.end() && v->is_string())
      out[name] = v->get<std::string>();
  return out;
}

}  // namespace

std::string comparison_printer::changed_versions(const nlohmann::json& base_context,
                                                 const nlohmann::json& new_context) {
  const auto base = versions_of(base_context), next = versions_of(new_context);
  std::string line;
  for (const auto& [name, version] : base)
    if (const auto it = next.find(name); it != next.end() && it->second != version)
      line += fmt::format("{}`{}` {} → {}", line.empty() ? "" : " · ", name, version, it->second);
  return console_safe(line);  // read from results files
}

void comparison_printer::print_markdown(std::ostream& out, const comparison& c,
                                        const std::optional<gate_verdict>& gate) {
  auto context_line = [](const nlohmann::json& ctx) {
    std::string line =
        fmt::format("{} · commit {} · {}", ctx.value("device", std::string("?")),
                    ctx.value("git_commit", std::string("?")), ctx.value("date", std::string("?")));
    // The backends' knobs, where any were set (run_context.hpp).
    if (const auto env = ctx.find("backend_environment"); env != ctx.end() && env->is_object())
      for (const auto& [name, value] : env->items())
        line += fmt::format(" · `{}={}`", name,
                            value.is_string() ? value.get<std::string>() : value.dump());
    return console_safe(line);  // read from a results file
  };
  // Formatted into one buffer, written at once: a stream write per row costs more than
  // the formatting on 200,000 rows.
  fmt::memory_buffer buf;
  buf.reserve(4096 + 120 * c.rows.size());  // about a row's length
  auto to = std::back_inserter(buf);
  fmt::format_to(to, "**base:** {}  \n**new:** {}\n\n", context_line(c.base_context),
                 context_line(c.new_context));
  // A backend of another version (a peer upgraded, or run with other settings) is not the
  // same configuration, whatever its rows say.
  if (const std::string changed = changed_versions(c.base_context, c.new_context); !changed.empty())
    fmt::format_to(to, "**versions differ:** {}\n\n", changed);
  fmt::format_to(to,
                 "| configuration | base ms | new ms | new/base | base noise | new noise | p | "
                 "status | note |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n");
  // "| name | base ms | new ms | new/base | base noise | new noise | p | status | note |"
  std::string name;  // reused
  for (const auto& row : c.rows) {
    name.clear();
    row.config.append_name(name);
    put(buf, "| ");
    put_cell(buf, name);
    put(buf, " | ");
    put_ms(buf, row.base);
    put(buf, " | ");
    put_ms(buf, row.next);
    put(buf, " | ");
    if (row.ratio)
      fmt::format_to(to, "{:.3f}", *row.ratio);
    else
      put(buf, "–");
    put(buf, " | ");
    put_noise(buf, row.base);
    put(buf, " | ");
    put_noise(buf, row.next);
    put(buf, " | ");
    if (row.p_value)
      fmt::format_to(to, "{:.2g}", *row.p_value);
    else
      put(buf, "–");
    put(buf, " | ");
    put(buf, verdict_name(row.status));
    put(buf, " | ");
    put_cell(buf, row.note);
    put(buf, " |\n");
  }
  fmt::format_to(to,
                 "\n| backend | rows timed on both | geomean speed-up (base/new) |\n"
                 "|---|---:|---:|\n");
  for (const auto& s : c.summaries)
    fmt::format_to(to, "| {} | {} | {:.3f}× |\n",
                   s.backend.empty() ? "**all**" : markdown_cell(s.backend), s.rows,
                   s.geomean_speedup);
  // The tally in the order of the verdicts' names.
  std::array<size_t, size_t(verdict::gone) + 1> counts{};
  for (const auto& row : c.rows) ++counts[size_t(row.status)];
  std::map<std::string_view, size_t> by_name;
  for (size_t v = 0; v < counts.size(); ++v)
    if (counts[v]) by_name[verdict_name(verdict(v))] = counts[v];
  std::string tally;
  for (const auto& [name, n] : by_name)
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n, name);
  fmt::format_to(to, "\n{}\n", tally);
  if (gate) fmt::format_to(to, "\n{}\n", verdict_line(*gate));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

namespace {

// Everything to_json writes but the rows.
nlohmann::json json_head(const comparison& c, const std::optional<gate_verdict>& gate) {
  using nlohmann::json;
  json summaries = json::array();
  for (const auto& s : c.summaries)
    summaries.push_back({{"backend", s.backend.empty() ? "all" : s.backend},
                         {"rows", s.rows},
                         {"geomean_speedup", s.geomean_speedup}});
  json j = {{"glabench_results", "compare"},
            {"base", c.base_context},
            {"new", c.new_context},
            {"geomean", std::move(summaries)}};
  if (gate) {
    auto names = [](const std::vector<gate_row>& rows) {
      json out = json::array();
      for (const auto& r : rows) out.push_back(r.name);
      return out;
    };
    j["fail_on_regression_pct"] = gate->rule.fail_pct;
    j["exit_code"] = gate->exit_code();
    j["gate"] = {{"rule", "--fail-on-regression"},
                 {"fail_on_regression_pct", gate->rule.fail_pct},
                 {"allow_missing", gate->rule.allow_missing},
                 {"passed", gate->passed()},
                 {"rows_compared", gate->compared},
                 {"slower", names(gate->slower)},
                 {"broken", names(gate->broken)},
                 {"gone", names(gate->gone)},
                 {"skipped", names(gate->skipped)},
                 {"allowed_missing", names(gate->excused)},
                 {"verdict", comparison_printer::verdict_line(*gate)}};
  }
  return j;
}

// `text` as nlohmann's dump writes a string that is valid UTF-8 (ensure_ascii off).
void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  size_t run = 0;  // the start of the characters not yet written
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(ch));
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

// A number as nlohmann's dump writes it: null unless finite, else its shortest
// round-trip digits (nlohmann's own to_chars, which its serializer calls).
void append_json_number(std::string& out, std::optional<double> x) {
  if (!x || !std::isfinite(*x)) {
    out += "null";
    return;
  }
  char digits[64];
  out.append(digits, nlohmann::detail::to_chars(digits, digits + sizeof digits, *x));
}

}  // namespace

// The text is write_json_file's of to_json(c, gate) — dump(2) of json_safe strings and a
// final newline — but the rows, nearly all of it, are written one by one, never as JSON
// objects: building, dumping and freeing 200,000 of them cost seconds.
std::string comparison_printer::json_text(const comparison& c,
                                          const std::optional<gate_verdict>& gate) {
  using nlohmann::json;
  json head = json_head(c, gate);
  if (!json_is_safe(head)) head = json_safe_tree(head);
  std::string out;
  out.reserve(4096 + 400 * c.rows.size());
  // nlohmann's own serializer writes every value but the rows.
  nlohmann::detail::serializer<json> dump(nlohmann::detail::output_adapter<char, std::string>(out),
                                          ' ', json::error_handler_t::replace);
  auto number = [&](std::optional<double> x) { append_json_number(out, x); };
  auto median = [](const bench_row* r) {
    return r && r->stats ? std::optional<double>(r->stats->median) : std::nullopt;
  };
  auto noise = [](const bench_row* r) {
    return r && r->stats ? std::optional<double>(relative_noise(*r->stats)) : std::nullopt;
  };
  auto key = [&](const char* name) { out += "      \"", out += name, out += "\": "; };
  auto text = [&](const char* name, std::string_view value) {
    key(name);
    if (printable_ascii(value))
      append_json_string(out, value);
    else
      append_json_string(out, json_safe(value));
    out += ",\n";
  };
  std::string scratch;  // a row's name and shape
  auto write_rows = [&] {
    out += "  \"rows\": ";
    if (c.rows.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const compare_row& row = c.rows[i];
      out += "    {\n";  // the keys in dump's (sorted) order
      text("backend", row.config.backend);
      key("base_ms"), number(median(row.base)), out += ",\n";
      key("base_noise"), number(noise(row.base)), out += ",\n";
      key("causal"), out += row.config.causal ? "true" : "false", out += ",\n";
      text("dtype", row.config.dtype);
      text("gates", row.config.gates);
      text("mode", row.config.mode);
      scratch.clear();
      row.config.append_name(scratch);
      text("name", scratch);
      key("new_ms"), number(median(row.next)), out += ",\n";
      key("new_noise"), number(noise(row.next)), out += ",\n";
      text("note", row.note);
      text("op", row.config.op);
      key("p_value"), number(row.p_value), out += ",\n";
      key("ratio"), number(row.ratio), out += ",\n";
      scratch.clear();
      row.config.append_shape(scratch);
      text("shape", scratch);
      text("status", verdict_name(row.status));
      key("timing"), append_json_string(out, row.config.timing);
      out += i + 1 < c.rows.size() ? "\n    },\n" : "\n    }\n";
    }
    out += "  ]";
  };
  // The top level in dump's order, "rows" among the others.
  out += "{\n";
  bool rows_written = false, first = true;
  for (const auto& [name, value] : head.items()) {
    if (!first) out += ",\n";
    first = false;
    if (!rows_written && name > "rows") {
      write_rows(), out += ",\n";
      rows_written = true;
    }
    out += "  ";
    append_json_string(out, name);
    out += ": ";
    dump.dump(value, true, false, 2, 2);
  }
  if (!rows_written) {
    if (!first) out += ",\n";
    write_rows();
  }
  out += "\n}\n";
  return out;
}

nlohmann::json comparison_printer::to_json(const comparison& c,
                                           const std::optional<gate_verdict>& gate) {
  using nlohmann::json;
  json rows = json::array();
  rows.get_ref<json::array_t&>().reserve(c.rows.size());
  for (const auto& row : c.rows) {
    // Built field by field and moved in: nlohmann's initializer lists copy every value,
    // which costs seconds on 200,000 rows.
    json j(json::value_t::object);
    auto& o = j.get_ref<json::object_t&>();
    auto put = [&o](const char* key, json value) { o.emplace(key, std::move(value)); };
    auto median = [](const bench_row* r) {
      return r && r->stats ? json(r->stats->median) : json(nullptr);
    };
    auto noise = [](const bench_row* r) {
      return r && r->stats ? json(relative_noise(*r->stats)) : json(nullptr);
    };
    put("name", row.config.name());
    put("backend", row.config.backend);
    put("op", row.config.op);
    put("dtype", row.config.dtype);
    put("mode", row.config.mode);
    put("causal", row.config.causal);
    put("gates", row.config.gates);
    put("timing", row.config.timing);
    put("shape", row.config.shape());
    put("status", verdict_name(row.status));
    put("note", row.note);
    put("base_ms", median(row.base));
    put("new_ms", median(row.next));
    put("base_noise", noise(row.base));
    put("new_noise", noise(row.next));
    put("ratio", row.ratio ? json(*row.ratio) : json(nullptr));
    put("p_value", row.p_value ? json(*row.p_value) : json(nullptr));
    rows.push_back(std::move(j));
  }
  json j = json_head(c, gate);
  j["rows"] = std::move(rows);  // (an initializer list would copy every row)
  return j;
}

}  // namespace glabench
