// glabench fixtures make | show
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "commands.hpp"
#include "fixture_catalog.hpp"
#include "option_checks.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

void show(const fixture& f) {
  const problem& p = f.prob;
  fmt::print("{}\n  op={} B={} T={} H={} K={} V={} scale={:.6g}{}\n", console_safe(f.path),
             op_name(p.op), p.B, p.T, p.H, p.K, p.V, p.scale,
             p.op == op_kind::softmax_attn ? fmt::format(" causal={}", p.causal ? 1 : 0) : "");
  if (!f.description.empty()) fmt::print("  description: {}\n", console_safe(f.description));
  if (p.varlen()) {  // a packed batch: its sequences' lengths, the first 32
    std::string lengths;
    for (size_t n = 0; n + 1 < p.cu_seqlens.size() && n < 32; ++n)
      lengths += fmt::format("{}{}", n ? " " : "", p.cu_seqlens[n + 1] - p.cu_seqlens[n]);
    if (p.cu_seqlens.size() > 33) lengths += " ...";
    fmt::print("  cu_seqlens: {} sequences, of {} tokens\n", p.num_states(), lengths);
  }
  auto row = [](const std::string& path, const tensor& t) {
    if (t.data.empty()) return;
    const auto [lo, hi] = std::minmax_element(t.data.begin(), t.data.end());
    fmt::print("  {:<14} {:<18} min {:>10.3e}  max {:>10.3e}  l2 {:>10.3e}\n", path,
               shape_string(t.shape), *lo, *hi, l2_norm(t));
  };
  const op_inputs& in = f.inputs;
  row("/inputs/q", in.q);
  row("/inputs/k", in.k);
  row("/inputs/v", in.v);
  row("/inputs/g", in.g);
  row("/inputs/u", in.u);
  if (in.h0) row("/inputs/h0", *in.h0);
  if (in.d_o) row("/inputs/do", *in.d_o);
  if (in.dht) row("/inputs/dht", *in.dht);
  row("/expected/o", f.expected.o);
  row("/expected/ht", f.expected.ht);
  row("/expected/lse", f.expected.lse);
  if (f.expected_grads) {
    const op_gradients& g = *f.expected_grads;
    row("/expected/dq", g.dq);
    row("/expected/dk", g.dk);
    row("/expected/dv", g.dv);
    row("/expected/dg", g.dg);
    row("/expected/du", g.du);
    row("/expected/dh0", g.dh0);
  }
}

}  // namespace

void add_fixtures_command(CLI::App& app, int& exit_code) {
  CLI::App* fixtures = app.add_subcommand("fixtures", "make or inspect HDF5 fixtures");
  fixtures->require_subcommand(1);

  CLI::App* make = fixtures->add_subcommand(
      "make", "write the deterministic fixture set (expected values from the fp64 reference)");
  // Each command's options live as long as the callback that reads them.
  struct make_args {
    std::string out_dir, preset = "small";
    std::vector<std::string> only;
  };
  auto m = std::make_shared<make_args>();
  make->add_option("--out", m->out_dir, "folder to write into")->required();
  make->add_option("--preset", m->preset,
                   "small (the committed set) or bench (larger, not committed)")
      ->check(CLI::IsMember({"small", "bench"}));
  make->add_option("--only", m->only, "write only the fixtures with these names");
  make->callback([m, &exit_code] {
    const auto& [out_dir, preset, only] = *m;
    std::filesystem::create_directories(out_dir);
    const std::set<std::string> wanted(only.begin(), only.end());
    int written = 0;
    for (const auto& recipe : fixture_recipes(preset)) {
      if (!wanted.empty() && !wanted.count(recipe.name)) continue;
      fixture f = make_fixture(recipe);
      f.path = (std::filesystem::path(out_dir) / (recipe.name + ".h5")).string();
      write_fixture(f.path, f);
      fmt::print("wrote {} ({} bytes)\n", f.path, std::filesystem::file_size(f.path));
      ++written;
    }
    if (written == 0)
      throw std::invalid_argument("--only named no fixture of preset '" + preset + "'");
    exit_code = kExitOk;
  });

  CLI::App* show_cmd =
      fixtures->add_subcommand("show", "print a fixture's attributes, shapes and value ranges");
  auto files = std::make_shared<std::vector<std::string>>();
  auto read = std::make_shared<fixture_read_options>();
  show_cmd->add_option("files", *files, "fixture files or folders")->required();
  add_max_fixture_bytes_option(*show_cmd, *read);
  show_cmd->callback([files, read, &exit_code] {
    for (const auto& path : expand_fixture_paths(*files)) show(read_fixture(path, *read));
    exit_code = kExitOk;
  });
}

void add_max_fixture_bytes_option(CLI::App& cmd, fixture_read_options& options) {
  cmd.add_option("--max-fixture-bytes", options.max_bytes,
                 fmt::format("refuse a fixture whose datasets need more memory than SIZE bytes "
                             "(checked before reading; suffixes kB, MB, GB, TB are powers of "
                             "1000, KiB, MiB, GiB, TiB of 1024; default: half the physical "
                             "memory, here {} = {:.1f} GiB)",
                             options.max_bytes, static_cast<double>(options.max_bytes) / (1 << 30)))
      ->option_text("SIZE")
      ->transform(option_checks::bytes(1));
}

std::vector<std::string> expand_fixture_paths(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& arg : args) {
    if (!fs::is_directory(arg)) {
      out.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(arg))
      if (e.path().extension() == ".h5") found.push_back(e.path().string());
    if (found.empty()) throw fixture_error(arg, "(folder)", "contains no .h5 fixture");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace glabench::cli
