#include "isolation.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
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

// A case that the worker did not judge: `status` with `message`.
verify_case_result unjudged_case(const loaded_backend& b, const fixture& f, dtype storage,
                                 const verify_options& opts, case_status status,
                                 std::string message, double seconds) {
  verify_case_result r;
  r.backend = b.name();
  r.fixture = f.name();
  r.fixture_path = f.path;
  r.op = f.prob.op;
  r.storage = storage;
  r.devices = opts.devices;
  r.status = status;
  r.message = std::move(message);
  r.seconds = seconds;
  return r;
}

// How a worker that did not answer ended, as a case's or a row's message.
std::string lost_message(const worker_reply& reply, const char* what) {
  return reply.outcome == worker_reply::timeout
             ? reply.what
             : fmt::format("the worker running this {} {}", what, reply.what);
}

// A tensor as it crosses the pipe: its shape and its bytes (CBOR binary, not numbers).
nlohmann::json tensor_to_json(const tensor& t) {
  std::vector<std::uint8_t> bytes(t.data.size() * sizeof(double));
  if (!bytes.empty()) std::memcpy(bytes.data(), t.data.data(), bytes.size());
  return {{"shape", t.shape}, {"data", nlohmann::json::binary(std::move(bytes))}};
}

tensor tensor_from_json(const nlohmann::json& j) {
  tensor t;
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  const auto& bytes = j.at("data").get_binary();
  if (bytes.size() % sizeof(double)) throw std::runtime_error("fixture tensor: not whole doubles");
  t.data.resize(bytes.size() / sizeof(double));
  if (!bytes.empty()) std::memcpy(t.data.data(), bytes.data(), bytes.size());
  return t;
}

nlohmann::json optional_tensor(const std::optional<tensor>& t) {
  return t ? tensor_to_json(*t) : nlohmann::json(nullptr);
}

std::optional<tensor> optional_tensor_from(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  return v.is_null() ? std::nullopt : std::optional<tensor>(tensor_from_json(v));
}

// A fixture the parent has read and checked, handed to the worker whole, so that the
// worker opens no file for it: neither a plugin's chdir() nor its leaked descriptors can
// keep a case from its fixture.
nlohmann::json fixture_to_json(const fixture& f) {
  const problem& p = f.prob;
  nlohmann::json j = {{"path", f.path},
                      {"description", f.description},
                      {"problem",
                       {{"op", op_name(p.op)},
                        {"B", p.B},
                        {"T", p.T},
                        {"H", p.H},
                        {"K", p.K},
                        {"V", p.V},
                        {"scale", p.scale},
                        {"causal", p.causal}}},
                      {"inputs",
                       {{"q", tensor_to_json(f.inputs.q)},
                        {"k", tensor_to_json(f.inputs.k)},
                        {"v", tensor_to_json(f.inputs.v)},
                        {"g", tensor_to_json(f.inputs.g)},
                        {"u", tensor_to_json(f.inputs.u)},
                        {"h0", optional_tensor(f.inputs.h0)},
                        {"d_o", optional_tensor(f.inputs.d_o)},
                        {"dht", optional_tensor(f.inputs.dht)}}},
                      {"expected",
                       {{"o", tensor_to_json(f.expected.o)},
                        {"ht", tensor_to_json(f.expected.ht)},
                        {"lse", tensor_to_json(f.expected.lse)}}},
                      {"expected_grads", nullptr}};
  if (f.expected_grads) {
    const op_gradients& g = *f.expected_grads;
    j["expected_grads"] = {{"dq", tensor_to_json(g.dq)}, {"dk", tensor_to_json(g.dk)},
                           {"dv", tensor_to_json(g.dv)}, {"dg", tensor_to_json(g.dg)},
                           {"du", tensor_to_json(g.du)}, {"dh0", tensor_to_json(g.dh0)}};
  }
  return j;
}

fixture fixture_from_json(const nlohmann::json& j) {
  fixture f;
  f.path = j.at("path").get<std::string>();
  f.description = j.at("description").get<std::string>();
  const nlohmann::json& p = j.at("problem");
  const std::optional<op_kind> op = parse_op(p.at("op").get<std::string>());
  if (!op) throw std::runtime_error("fixture: unknown op");
  f.prob.op = *op;
  f.prob.B = p.at("B").get<int64_t>();
  f.prob.T = p.at("T").get<int64_t>();
  f.prob.H = p.at("H").get<int64_t>();
  f.prob.K = p.at("K").get<int64_t>();
  f.prob.V = p.at("V").get<int64_t>();
  f.prob.scale = p.at("scale").get<double>();
  f.prob.causal = p.at("causal").get<bool>();
  const nlohmann::json& in = j.at("inputs");
  f.inputs.q = tensor_from_json(in.at("q"));
  f.inputs.k = tensor_from_json(in.at("k"));
  f.inputs.v = tensor_from_json(in.at("v"));
  f.inputs.g = tensor_from_json(in.at("g"));
  f.inputs.u = tensor_from_json(in.at("u"));
  f.inputs.h0 = optional_tensor_from(in, "h0");
  f.inputs.d_o = optional_tensor_from(in, "d_o");
  f.inputs.dht = optional_tensor_from(in, "dht");
  const nlohmann::json& out = j.at("expected");
  f.expected.o = tensor_from_json(out.at("o"));
  f.expected.ht = tensor_from_json(out.at("ht"));
  f.expected.lse = tensor_from_json(out.at("lse"));
  if (const nlohmann::json& g = j.at("expected_grads"); !g.is_null())
    f.expected_grads = op_gradients{tensor_from_json(g.at("dq")), tensor_from_json(g.at("dk")),
                                    tensor_from_json(g.at("dv")), tensor_from_json(g.at("dg")),
                                    tensor_from_json(g.at("du")), tensor_from_json(g.at("dh0"))};
  return f;
}

// The bytes of a fixture's tensors; a fixture larger than this goes to the worker by
// (absolute) path instead, well inside the pipe's frame limit.
constexpr uint64_t kMaxInlineFixtureBytes = uint64_t(256) << 20;

uint64_t fixture_bytes(const fixture& f) {
  uint64_t n = 0;
  auto add = [&](const tensor& t) { n += t.data.size() * sizeof(double); };
  for (const tensor* t : {&f.inputs.q, &f.inputs.k, &f.inputs.v, &f.inputs.g, &f.inputs.u,
                          &f.expected.o, &f.expected.ht, &f.expected.lse})
    add(*t);
  for (const auto* t : {&f.inputs.h0, &f.inputs.d_o, &f.inputs.dht})
    if (*t) add(**t);
  if (f.expected_grads)
    for (const tensor* t : {&f.expected_grads->dq, &f.expected_grads->dk, &f.expected_grads->dv,
                            &f.expected_grads->dg, &f.expected_grads->du, &f.expected_grads->dh0})
      add(*t);
  return n;
}

// A file's path made absolute, so that the worker never depends on its working
// directory; anything else (a path that names no file, another kind of backend locator)
// as it is.
std::string absolute_path(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return path;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.string();
}

}  // namespace

worker_process& backend_isolation::worker_for(const std::string& path) {
  auto& w = workers_[path];
  if (!w) w = std::make_unique<worker_process>();
  return *w;
}

void backend_isolation::count_outcome(const std::string& path, const worker_reply& reply,
                                      const char* what) {
  int& n = timeouts_in_a_row_[path];
  n = reply.outcome == worker_reply::timeout ? n + 1 : 0;
  if (n >= kTimeoutsBeforeSkipping)
    skip_reason_[path] = fmt::format(
        "not run: the backend timed out in {} {}s in a row (the last: {}), so its remaining {}s "
        "are skipped",
        n, what, reply.what, what);
}

loaded_backend backend_isolation::describe(const std::string& path) {
  // Absolute: the worker never depends on its working directory. Its messages name the
  // path as given.
  const std::string absolute = absolute_path(path);
  const worker_reply reply = worker_for(path).request({{"type", "describe"}, {"path", absolute}},
                                                      {opts_.call_timeout_s, opts_.call_timeout_s});
  if (reply.outcome == worker_reply::timeout)
    throw backend_load_error(path + ": loading it hung: " + reply.what);
  if (reply.outcome != worker_reply::ok)
    throw backend_load_error(path + ": the worker loading it " + reply.what);
  if (!reply.message.value("ok", false)) {
    std::string error = reply.message.value("error", path + ": cannot be loaded");
    if (error.starts_with(absolute) && absolute != path)
      error = path + error.substr(absolute.size());
    throw backend_load_error(error);
  }
  try {
    const nlohmann::json& d = reply.message.at("backend");
    availability_[path] = d.at("availability").get<std::string>();
    return backend_from_description(path, d);
  } catch (const nlohmann::json::exception& e) {
    throw backend_load_error(path +
                             ": the worker loading it gave a malformed description: " + e.what());
  }
}

std::string backend_isolation::availability(const std::string& path) const {
  const auto it = availability_.find(path);
  return it == availability_.end() ? "unknown" : it->second;
}

verify_case_result backend_isolation::verify(const loaded_backend& backend, const fixture& f,
                                             dtype storage, const verify_options& opts) {
  if (const auto skip = skip_reason_.find(backend.path); skip != skip_reason_.end())
    return unjudged_case(backend, f, storage, opts, case_status::skipped, skip->second, 0);
  nlohmann::json req = {{"type", "verify"},
                        {"path", absolute_path(backend.path)},
                        {"dtype", dtype_name(storage)},
                        {"gradcheck", opts.gradcheck},
                        {"devices", opts.devices}};
  if (fixture_bytes(f) <= kMaxInlineFixtureBytes)
    req["fixture"] = fixture_to_json(f);
  else
    req["fixture_path"] = absolute_path(f.path);
  if (opts.tolerance) req["tolerance"] = *opts.tolerance;
  const auto start = std::chrono::steady_clock::now();
  const worker_reply reply =
      worker_for(backend.path).request(req, {opts_.call_timeout_s, opts_.call_timeout_s});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  count_outcome(backend.path, reply, "case");
  if (reply.outcome != worker_reply::ok)
    return unjudged_case(
        backend, f, storage, opts,
        reply.outcome == worker_reply::timeout ? case_status::timeout : case_status::crashed,
        lost_message(reply, "case"), seconds);
  // Whatever went wrong in the worker is this case's failure, never the run's.
  std::string error;
  if (reply.message.value("ok", false)) {
    try {
      verify_case_result r = verify_case_from_json(reply.message.at("result"));
      // The worker's copy of the fixture path (or its absolute form) becomes the one given.
      r.fixture = f.name();
      r.fixture_path = f.path;
      return r;
    } catch (const std::exception& e) {
      error = std::string("the worker's reply is malformed: ") + e.what();
    }
  } else {
    error = reply.message.value("error", std::string("the worker failed"));
  }
  return unjudged_case(backend, f, storage, opts, case_status::failed,
                       "the worker running this case failed: " + error, seconds);
}

bench_row backend_isolation::bench(const loaded_backend& backend, const nlohmann::json& request,
                                   double call_limit_s) {
  bench_row row;  // a row the worker did not make: the caller fills in the configuration
  if (const auto skip = skip_reason_.find(backend.path); skip != skip_reason_.end()) {
    row.status = bench_status::skipped;
    row.message = skip->second;
    return row;
  }
  nlohmann::json req = request;
  req["type"] = "bench";
  req["path"] = absolute_path(backend.path);
  const worker_reply reply =
      worker_for(backend.path)
          .request(req, {call_limit_s, std::max(call_limit_s, opts_.call_timeout_s)});
  count_outcome(backend.path, reply, "configuration");
  if (reply.outcome != worker_reply::ok) {
    row.status =
        reply.outcome == worker_reply::timeout ? bench_status::timeout : bench_status::crashed;
    row.message = lost_message(reply, "configuration");
    return row;
  }
  std::string error;
  if (reply.message.value("ok", false)) {
    try {
      bench_results one = bench_results_from_json(reply.message.at("results"), "worker reply");
      if (one.rows.size() == 1) return std::move(one.rows.front());
      error = "the worker's reply holds " + std::to_string(one.rows.size()) + " rows, not one";
    } catch (const std::exception& e) {
      error = std::string("the worker's reply is malformed: ") + e.what();
    }
  } else {
    error = reply.message.value("error", std::string("the worker failed"));
  }
  row.status = bench_status::failed;
  row.message = "the worker running this configuration failed: " + error;
  return row;
}

namespace {

// The worker's end of its pipe, on descriptors a plugin is unlikely to touch, and checked
// before each use: a plugin that closes or replaces them (close(3), dup2(…, 4), a
// closefrom) cannot make the worker read or write something else. The worker then cannot
// answer and ends with kWorkerLostPipeExit, which the parent reports as the case's crash.
struct pipe_end {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
};

pipe_end worker_in, worker_out;

// Below the soft descriptor limit (where most plugins that use many descriptors stop
// short) and at most about 1000, so that the descriptor table stays small.
int high_descriptor() {
  rlimit r{};
  rlim_t top = 1024;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    top = std::min<rlim_t>(r.rlim_cur, 1024);
  return top > 64 ? int(top) - 16 : 10;
}

// Moves `fd` to a high descriptor (close-on-exec) and closes `fd`.
pipe_end move_high(int fd) {
  pipe_end e;
  e.fd = fcntl(fd, F_DUPFD_CLOEXEC, high_descriptor());
  if (e.fd < 0) e.fd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  struct stat st {};
  if (e.fd < 0 || fstat(e.fd, &st) != 0)
    throw std::runtime_error(std::string("cannot move the worker's pipe: ") + strerror(errno));
  close(fd);
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  return e;
}

// Ends the worker when its pipe end is no longer the one the parent gave it.
void check(const pipe_end& e) {
  struct stat st {};
  if (fstat(e.fd, &st) == 0 && st.st_dev == e.dev && st.st_ino == e.ino) return;
  const std::string text = fmt::format(
      "glabench worker: descriptor {} of its pipe to glabench was closed or replaced (by the "
      "backend); the worker cannot answer and ends\n",
      e.fd);
  (void)!write(2, text.data(), text.size());
  _exit(kWorkerLostPipeExit);
}

// A process a plugin forks does not keep the worker's pipe open (glabench would not see
// the worker's end while it lives) or take part in the protocol. Exec'd ones lose them
// anyway (close-on-exec).
extern "C" void close_pipe_in_child() {
  close(worker_in.fd);
  close(worker_out.fd);
}

}  // namespace

int run_worker() {
  constexpr int in = 3, out = 4, watch = 5;
  call_watch::attach(watch);
  close(watch);  // the mapping stays
  worker_in = move_high(in);
  worker_out = move_high(out);
  pthread_atfork(nullptr, nullptr, close_pipe_in_child);
  std::map<std::string, loaded_backend> loaded;
  std::optional<bench_worker> bench;
  auto backend_at = [&](const std::string& path) -> const loaded_backend& {
    auto it = loaded.find(path);
    if (it == loaded.end()) {
      // dlopen (the plugin's constructors) and its entry function run under the time
      // limit as every call does.
      const watched_call watch_loading;
      it = loaded.emplace(path, load_backend(path)).first;
    }
    return it->second;
  };
  for (;;) {
    check(worker_in);
    std::optional<nlohmann::json> req = read_frame(worker_in.fd);
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
        fixture f;
        if (req->contains("fixture")) {
          f = fixture_from_json(req->at("fixture"));
        } else {
          // Too large to send (the parent has read and checked it, its size limit
          // included): read again, by absolute path.
          fixture_read_options no_limit;
          no_limit.max_bytes = UINT64_MAX;
          f = read_fixture(req->at("fixture_path").get<std::string>(), no_limit);
        }
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
    check(worker_out);
    if (!write_frame(worker_out.fd, reply)) return 1;
  }
}

}  // namespace glabench
