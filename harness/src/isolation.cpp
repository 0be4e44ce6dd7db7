#include "isolation.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <vector>

#include "abi_vocabulary.hpp"
#include "backend_runner.hpp"
#include "bench_runner.hpp"
#include "call_watch.hpp"
#include "device_context.hpp"
#include "verify_case_json.hpp"
#include "worker_channel.hpp"

namespace glabench {
namespace {

// A plugin's table as the parent knows it: the worker's description, no functions and no
// build member (loaded_backend::build holds the plugin's).
struct described_table {
  glabench_backend table{};
  std::string name, version;
  std::vector<glabench_capability> capabilities;
};

nlohmann::json describe_table(const loaded_backend& b) {
  const glabench_backend& t = *b.table;
  nlohmann::json caps = nlohmann::json::array();
  for (size_t i = 0; i < t.num_capabilities; ++i) {
    const glabench_capability& c = t.capabilities[i];
    caps.push_back({{"op", int(c.op)},
                    {"code", int(c.dtype.code)},
                    {"bits", int(c.dtype.bits)},
                    {"lanes", int(c.dtype.lanes)},
                    {"mode", int(c.mode)}});
  }
  return {{"name", t.name},
          {"version", t.version},
          {"device_type", int(t.device_type)},
          {"abi_major", t.abi_major},
          {"abi_minor", t.abi_minor},
          {"capabilities", caps},
          {"build", to_json(b.build)},
          {"knobs", b.knobs},
          {"availability", availability_here(b)}};
}

loaded_backend backend_from_description(const std::string& path, const nlohmann::json& d) {
  auto held = std::make_shared<described_table>();
  held->name = d.at("name").get<std::string>();
  held->version = d.at("version").get<std::string>();
  for (const auto& c : d.at("capabilities"))
    held->capabilities.push_back(
        {glabench_op(c.at("op").get<int>()),
         DLDataType{uint8_t(c.at("code").get<int>()), uint8_t(c.at("bits").get<int>()),
                    uint16_t(c.at("lanes").get<int>())},
         glabench_mode(c.at("mode").get<int>())});
  glabench_backend& t = held->table;
  t.abi_major = d.at("abi_major").get<uint32_t>();
  t.abi_minor = d.at("abi_minor").get<uint32_t>();
  t.struct_size = sizeof(glabench_backend);
  t.name = held->name.c_str();
  t.version = held->version.c_str();
  t.device_type = DLDeviceType(d.at("device_type").get<int>());
  t.capabilities = held->capabilities.data();
  t.num_capabilities = held->capabilities.size();
  t.build = {};  // compiler NULL: not this table's to say
  const glabench_backend* table = &held->table;
  return {path, table, std::shared_ptr<void>(held, held.get()),
          backend_build_from_json(d.at("build")), d.at("knobs").get<std::vector<std::string>>()};
}

// The result of a case whose worker died or was killed.
verify_case_result lost_case(const loaded_backend& b, const fixture& f, dtype storage,
                             const verify_options& opts, const worker_reply& reply,
                             double seconds) {
  verify_case_result r;
  r.backend = b.name();
  r.fixture = f.name();
  r.fixture_path = f.path;
  r.op = f.prob.op;
  r.storage = storage;
  r.devices = opts.devices;
  r.status = reply.outcome == worker_reply::timeout ? case_status::timeout : case_status::crashed;
  r.message = "the worker running this case " + reply.what;
  if (reply.outcome == worker_reply::timeout) r.message = reply.what;
  r.seconds = seconds;
  return r;
}

[[noreturn]] void worker_failed(const nlohmann::json& reply) {
  throw std::runtime_error(reply.value("error", std::string("the worker failed")));
}

}  // namespace

worker_process& backend_isolation::worker_for(const std::string& path) {
  auto& w = workers_[path];
  if (!w) w = std::make_unique<worker_process>();
  return *w;
}

loaded_backend backend_isolation::describe(const std::string& path) {
  const worker_reply reply =
      worker_for(path).request({{"type", "describe"}, {"path", path}}, opts_.call_timeout_s);
  if (reply.outcome != worker_reply::ok)
    throw backend_load_error(path + ": loading it " +
                             (reply.outcome == worker_reply::timeout
                                  ? "hung: " + reply.what
                                  : "killed the worker that tried: " + reply.what));
  if (!reply.message.value("ok", false))
    throw backend_load_error(reply.message.value("error", path + ": cannot be loaded"));
  const nlohmann::json& d = reply.message.at("backend");
  availability_[path] = d.at("availability").get<std::string>();
  return backend_from_description(path, d);
}

std::string backend_isolation::availability(const std::string& path) const {
  const auto it = availability_.find(path);
  return it == availability_.end() ? "unknown" : it->second;
}

verify_case_result backend_isolation::verify(const loaded_backend& backend, const fixture& f,
                                             dtype storage, const verify_options& opts) {
  nlohmann::json req = {{"type", "verify"},
                        {"path", backend.path},
                        {"fixture", f.path},
                        {"dtype", dtype_name(storage)},
                        {"gradcheck", opts.gradcheck},
                        {"devices", opts.devices}};
  if (opts.tolerance) req["tolerance"] = *opts.tolerance;
  const auto start = std::chrono::steady_clock::now();
  const worker_reply reply = worker_for(backend.path).request(req, opts_.call_timeout_s);
  if (reply.outcome != worker_reply::ok)
    return lost_case(
        backend, f, storage, opts, reply,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!reply.message.value("ok", false)) worker_failed(reply.message);
  return verify_case_from_json(reply.message.at("result"));
}

bench_row backend_isolation::bench(const loaded_backend& backend, const nlohmann::json& request,
                                   double call_limit_s) {
  nlohmann::json req = request;
  req["type"] = "bench";
  req["path"] = backend.path;
  const worker_reply reply = worker_for(backend.path).request(req, call_limit_s);
  if (reply.outcome != worker_reply::ok) {
    bench_row row;
    row.status = reply.outcome == worker_reply::timeout ? bench_status::timeout
                                                        : bench_status::crashed;
    row.message = reply.outcome == worker_reply::timeout
                      ? reply.what
                      : "the worker running this configuration " + reply.what;
    return row;  // the caller fills in the configuration
  }
  if (!reply.message.value("ok", false)) worker_failed(reply.message);
  bench_results one = bench_results_from_json(reply.message.at("results"), "worker reply");
  if (one.rows.size() != 1) throw std::runtime_error("worker reply: not one bench row");
  return std::move(one.rows.front());
}

int run_worker() {
  constexpr int in = 3, out = 4, watch = 5;
  call_watch::attach(watch);
  std::map<std::string, loaded_backend> loaded;
  std::optional<bench_worker> bench;
  auto backend_at = [&](const std::string& path) -> const loaded_backend& {
    auto it = loaded.find(path);
    if (it == loaded.end()) it = loaded.emplace(path, load_backend(path)).first;
    return it->second;
  };
  for (;;) {
    std::optional<nlohmann::json> req = read_frame(in);
    if (!req) return 0;  // the parent is done
    nlohmann::json reply;
    try {
      const std::string type = req->at("type").get<std::string>();
      const loaded_backend& b = backend_at(req->at("path").get<std::string>());
      if (type == "describe") {
        reply = {{"ok", true}, {"backend", describe_table(b)}};
      } else if (type == "verify") {
        const std::optional<dtype> d = parse_dtype(req->at("dtype").get<std::string>());
        if (!d) throw std::runtime_error("unknown dtype");
        verify_options opts;
        opts.gradcheck = req->at("gradcheck").get<bool>();
        opts.devices = req->at("devices").get<std::vector<int32_t>>();
        if (req->contains("tolerance")) opts.tolerance = req->at("tolerance").get<double>();
        // The parent has read and checked this fixture, its size limit included.
        fixture_read_options no_limit;
        no_limit.max_bytes = UINT64_MAX;
        const fixture f = read_fixture(req->at("fixture").get<std::string>(), no_limit);
        reply = {{"ok", true}, {"result", to_json(verify_case(b, f, *d, opts))}};
      } else if (type == "bench") {
        if (!bench) bench.emplace();
        bench_results one;
        one.rows.push_back(bench->run(b, *req));
        reply = {{"ok", true}, {"results", to_json(one)}};
      } else {
        throw std::runtime_error("unknown request '" + type + "'");
      }
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"error", e.what()}};
    }
    if (!write_frame(out, reply)) return 1;
  }
}

}  // namespace glabench
