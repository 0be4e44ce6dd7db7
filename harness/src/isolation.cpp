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
#include "decode_drift_json.hpp"
#include "device_context.hpp"
#include "verify_case_json.hpp"
#include "worker_channel.hpp"
#include "worker_protocol.hpp"

namespace glabench {
namespace {

using worker_protocol::backend_description;

// A plugin's table as the parent knows it: the worker's description, no functions and no
// build member (loaded_backend::build holds the plugin's).
struct described_table {
  glabench_backend table{};
  backend_description d;
};

backend_description description_of(const loaded_backend& b) {
  const glabench_backend& t = *b.table;
  return {t.name,        t.version,
          t.device_type, t.abi_major,
          t.abi_minor,   {t.capabilities, t.capabilities + t.num_capabilities},
          b.build,       b.knobs,
          b.features(),  availability_here(b)};
}

loaded_backend backend_from_description(const std::string& path, backend_description d) {
  auto held = std::make_shared<described_table>();
  held->d = std::move(d);
  glabench_backend& t = held->table;
  t.abi_major = held->d.abi_major;
  t.abi_minor = held->d.abi_minor;
  t.struct_size = sizeof(glabench_backend);
  t.name = held->d.name.c_str();
  t.version = held->d.version.c_str();
  t.device_type = held->d.device_type;
  t.capabilities = held->d.capabilities.data();
  t.num_capabilities = held->d.capabilities.size();
  t.build = {};                   // compiler NULL: not this table's to say
  t.features = held->d.features;  // read from the plugin's table where it holds them
  const glabench_backend* table = &held->table;
  return {path, table, std::shared_ptr<void>(held, held.get()), held->d.build, held->d.knobs};
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
  if (f.prob.has_state()) r.state_storage = b.state_dtype(storage);
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

// The bytes of a fixture's tensors; a fixture larger than this goes to the worker by
// (absolute) path instead, well inside the pipe's frame limit.
constexpr uint64_t kMaxInlineFixtureBytes = uint64_t(256) << 20;

// Walks a description and adds up the bytes of the tensors it holds.
struct tensor_bytes {
  uint64_t n = 0;
  template <typename V>
  void operator()(const char*, const V&) {}
  template <typename V, typename Describe>
  void operator()(const char*, const V& v, const Describe& describe) {
    if constexpr (json_fields_detail::is_optional<V>::value) {
      if (v) describe(*this, *v);
    } else {
      describe(*this, v);
    }
  }
  template <typename... A>
  void named(const A&...) {}
  template <typename... A>
  void present_if(const A&...) {}
  void bytes(const char*, const std::vector<double>& values) {
    n += values.size() * sizeof(double);
  }
};

uint64_t fixture_bytes(const fixture& f) {
  tensor_bytes count;
  worker_protocol::fixture_fields(count, f);
  return count.n;
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
    backend_description description =
        from_json_by<backend_description>(d, worker_protocol::backend_description_fields);
    availability_[path] = description.availability;
    return backend_from_description(path, std::move(description));
  } catch (const nlohmann::json::exception& e) {
    throw backend_load_error(path +
                             ": the worker loading it gave a malformed description: " + e.what());
  }
}

std::string backend_isolation::availability(const std::string& path) const {
  const auto it = availability_.find(path);
  return it == availability_.end() ? "unknown" : it->second;
}

backend_isolation::request_outcome backend_isolation::ask(
    const loaded_backend& backend, const nlohmann::json& request, const worker_limits& limits,
    const char* what, const char* key, const std::function<void(const nlohmann::json&)>& accept) {
  request_outcome out;
  if (const auto skip = skip_reason_.find(backend.path); skip != skip_reason_.end()) {
    out.status = case_status::skipped;
    out.message = skip->second;
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  const worker_reply reply = worker_for(backend.path).request(request, limits);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  count_outcome(backend.path, reply, what);
  if (reply.outcome != worker_reply::ok) {
    out.status =
        reply.outcome == worker_reply::timeout ? case_status::timeout : case_status::crashed;
    out.message = lost_message(reply, what);
    return out;
  }
  // Whatever went wrong in the worker is this case's failure, never the run's.
  std::string error;
  if (reply.message.value("ok", false)) {
    try {
      accept(reply.message.at(key));
      out.accepted = true;
      return out;
    } catch (const std::exception& e) {
      error = std::string("the worker's reply is malformed: ") + e.what();
    }
  } else {
    error = reply.message.value("error", std::string("the worker failed"));
  }
  out.status = case_status::failed;
  out.message = fmt::format("the worker running this {} failed: {}", what, error);
  return out;
}

verify_case_result backend_isolation::verify(const loaded_backend& backend, const fixture& f,
                                             dtype storage, const verify_options& opts) {
  nlohmann::json req = {{"type", "verify"},
                        {"path", absolute_path(backend.path)},
                        {"dtype", dtype_name(storage)},
                        {"options", to_json_by(opts, worker_protocol::verify_options_fields)}};
  if (fixture_bytes(f) <= kMaxInlineFixtureBytes)
    req["fixture"] = to_json_by(f, worker_protocol::fixture_fields);
  else
    req["fixture_path"] = absolute_path(f.path);
  verify_case_result r;
  const request_outcome out =
      ask(backend, req, {opts_.call_timeout_s, opts_.call_timeout_s}, "case", "result",
          [&](const nlohmann::json& result) { r = verify_case_from_json(result); });
  if (!out.accepted)
    return unjudged_case(backend, f, storage, opts, out.status, out.message, out.seconds);
  // The worker's copy of the fixture path (or its absolute form) becomes the one given.
  r.fixture = f.name();
  r.fixture_path = f.path;
  return r;
}

bench_row backend_isolation::bench(const loaded_backend& backend, const nlohmann::json& request,
                                   double call_limit_s) {
  nlohmann::json req = request;
  req["type"] = "bench";
  req["path"] = absolute_path(backend.path);
  bench_row row;  // a row the worker did not make: the caller fills in the configuration
  // Idle time and warm-up calls (a configuration's first) run to --call-timeout.
  const double outer_s = std::max(call_limit_s, opts_.call_timeout_s);
  const request_outcome out =
      ask(backend, req, {call_limit_s, outer_s, outer_s}, "configuration", "results",
          [&](const nlohmann::json& results) {
            bench_results one = bench_results_from_json(results, "worker reply");
            if (one.rows.size() != 1)
              throw std::runtime_error("it holds " + std::to_string(one.rows.size()) +
                                       " rows, not one");
            row = std::move(one.rows.front());
          });
  if (out.accepted) return row;
  row.status = out.status == case_status::skipped   ? bench_status::skipped
               : out.status == case_status::timeout ? bench_status::timeout
               : out.status == case_status::crashed ? bench_status::crashed
                                                    : bench_status::failed;
  row.message = out.message;
  return row;
}

decode_drift_result backend_isolation::decode_drift(const loaded_backend& backend, op_kind op,
                                                    dtype storage, const std::string& gates,
                                                    const decode_drift_options& opts) {
  const nlohmann::json req = {
      {"type", "decode_drift"},
      {"path", absolute_path(backend.path)},
      {"op", op_name(op)},
      {"dtype", dtype_name(storage)},
      {"gates", gates},
      {"options", to_json_by(opts, worker_protocol::decode_drift_options_fields)}};
  decode_drift_result r;
  const request_outcome out =
      ask(backend, req, {opts_.call_timeout_s, opts_.call_timeout_s}, "case", "result",
          [&](const nlohmann::json& result) { r = decode_drift_from_json(result); });
  if (out.accepted) return r;
  // A case the worker did not judge: `out` says how it ended.
  r = decode_drift_case(backend, op, storage, gates, opts);
  r.status = out.status;
  r.message = out.message;
  r.seconds = out.seconds;
  return r;
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
        reply = {{"ok", true},
                 {"backend",
                  to_json_by(description_of(b), worker_protocol::backend_description_fields)}};
      } else if (type == "verify") {
        const std::optional<dtype> d = parse_dtype(req->at("dtype").get<std::string>());
        if (!d) throw std::runtime_error("unknown dtype");
        const auto opts = from_json_by<verify_options>(req->at("options"),
                                                       worker_protocol::verify_options_fields);
        fixture f;
        if (req->contains("fixture")) {
          f = from_json_by<fixture>(req->at("fixture"), worker_protocol::fixture_fields);
        } else {
          // Too large to send (the parent has read and checked it, its size limit
          // included, in a child first): read again, by absolute path.
          fixture_read_options checked;
          checked.max_bytes = UINT64_MAX;
          checked.in_child_first = false;
          f = read_fixture(req->at("fixture_path").get<std::string>(), checked);
        }
        reply = {{"ok", true}, {"result", to_json(verify_case(b, f, *d, opts))}};
      } else if (type == "decode_drift") {
        const std::optional<op_kind> op = parse_op(req->at("op").get<std::string>());
        const std::optional<dtype> d = parse_dtype(req->at("dtype").get<std::string>());
        if (!op || !d) throw std::runtime_error("unknown op or dtype");
        const auto opts = from_json_by<decode_drift_options>(
            req->at("options"), worker_protocol::decode_drift_options_fields);
        reply = {{"ok", true},
                 {"result", to_json(run_decode_drift(b, *op, *d,
                                                     req->at("gates").get<std::string>(), opts))}};
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
