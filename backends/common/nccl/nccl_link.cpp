// NCCL for the multi-GPU backends (nccl_link.hpp), resolved with dlopen/dlsym.
#include "nccl_link.hpp"

#if GLABENCH_HAVE_NCCL

#include <dlfcn.h>
#include <nccl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "../device_guard.hpp"
#include "glabench/launcher.hpp"
#include "id_store.hpp"

namespace glabench::cuda_plugin::nccl {
namespace {

struct library {
  bool ok = false;
  std::string why;
  int version = 0;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
};

template <typename F>
bool resolve(void* h, const char* name, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  if (!*out && why->empty()) *why = std::string("libnccl.so.2 has no ") + name;
  return *out != nullptr;
}

const library& lib() {
  static const library l = [] {
    library r;
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      r.why = std::string("NCCL not found (libnccl.so.2 on the library path): ") + (e ? e : "");
      return r;
    }
    bool all = resolve(h, "ncclGetVersion", &r.get_version, &r.why);
    all &= resolve(h, "ncclGetUniqueId", &r.get_unique_id, &r.why);
    all &= resolve(h, "ncclCommInitRank", &r.init_rank, &r.why);
    all &= resolve(h, "ncclGetErrorString", &r.error_string, &r.why);
    all &= resolve(h, "ncclGroupStart", &r.group_start, &r.why);
    all &= resolve(h, "ncclGroupEnd", &r.group_end, &r.why);
    all &= resolve(h, "ncclSend", &r.send, &r.why);
    all &= resolve(h, "ncclRecv", &r.recv, &r.why);
    all &= resolve(h, "ncclAllGather", &r.all_gather, &r.why);
    all &= resolve(h, "ncclBroadcast", &r.broadcast, &r.why);
    all &= resolve(h, "ncclAllReduce", &r.all_reduce, &r.why);
    if (all && r.get_version(&r.version) == ncclSuccess) r.ok = true;
    return r;
  }();
  return l;
}

std::string named(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return {};
  return std::string(what) + ": " + (lib().error_string ? lib().error_string(r) : "NCCL error") +
         " (" + std::to_string(int(r)) + ")";
}

// How much later than rank 0's glabench another rank's may start (the launcher's spread).
constexpr long long kLaunchSpreadS = 10;

// Through the id store where MPI's rendezvous gave one: rank 0 puts, the others get.
// Else rank 0 writes the id to a temporary file beside it and renames it into place, so a
// reader never sees half an id; the others wait for the file (up to 120 s). The temporary
// file is created by mkstemp (O_CREAT | O_EXCL, mode 0600, a name nobody can predict):
// it never follows a symlink or writes into a file someone else put there.
std::string share_unique_id(const process_ranks& k, ncclUniqueId* id) {
  if (k.rank == 0) {
    if (std::string e = named(lib().get_unique_id(id), "ncclGetUniqueId"); !e.empty()) return e;
    if (!k.id_store.empty())
      return id_store_put(k.id_store, k.key, id->internal, sizeof id->internal);
    std::string tmp = k.id_file + ".XXXXXX";
    const int fd = mkstemp(tmp.data());
    if (fd < 0)
      return "cannot create a temporary file beside " + k.id_file + " for NCCL's unique id";
    const bool written =
        write(fd, id->internal, sizeof id->internal) == ssize_t(sizeof id->internal);
    if (close(fd) != 0 || !written) {
      std::remove(tmp.c_str());
      return "cannot write NCCL's unique id to " + tmp;
    }
    if (std::rename(tmp.c_str(), k.id_file.c_str()) != 0) {
      std::remove(tmp.c_str());
      return "cannot rename " + tmp + " to " + k.id_file;
    }
    return {};
  }
  if (!k.id_store.empty())
    return id_store_get(k.id_store, k.key, k.rank, id->internal, sizeof id->internal);
  // A file written before this run began (its glabench's start, less the launcher's spread
  // between ranks) is an earlier run's, left by a rank 0 killed before it removed it.
  const long long started = launcher::glabench_started();
  const auto fresh = [&] {
    struct stat st {};
    return stat(k.id_file.c_str(), &st) == 0 &&
           (started == 0 || static_cast<long long>(st.st_mtime) >= started - kLaunchSpreadS);
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    std::ifstream f(k.id_file, std::ios::binary);
    if (f && fresh() && f.read(id->internal, sizeof id->internal) &&
        f.gcount() == sizeof id->internal)
      return {};
    if (std::chrono::steady_clock::now() > give_up)
      return "NCCL's unique id file " + k.id_file + ": no id from rank 0 within 120 s";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

bool library_loaded(std::string* why) {
  if (!lib().ok && why) *why = lib().why;
  return lib().ok;
}
int library_version() {
  return lib().ok ? lib().version : 0;
}

namespace {

// One process per rank from <prefix>_NCCL_WORLD and _RANK, or the launcher's own
// variables (glabench/launcher.hpp's ranks_place). NCCL's unique id in <prefix>_NCCL_ID_FILE
// where set (required with the backend's variables), else in the id store MPI's rendezvous
// named (GLABENCH_ID_STORE, keyed by the prefix), else in the node's rendezvous file (one
// node), named by the backend too: two backends of one run never read each other's id.
process_ranks read_knobs(const std::string& prefix) {
  process_ranks r;
  const launcher::place at = launcher::ranks_place(prefix);
  const bool own_variables = at.launcher == prefix + "_NCCL_WORLD";
  if (!at.error.empty()) {
    r.error = own_variables ? at.error : at.launcher + ": " + at.error;
    return r;
  }
  if (at.world <= 1) return r;
  const std::string file_name = prefix + "_NCCL_ID_FILE";
  const char* file = std::getenv(file_name.c_str());
  r.world = at.world;
  r.rank = at.rank;
  r.key = prefix;
  const char* store = std::getenv(kIdStoreVariable);
  if (file && *file) {
    r.id_file = file;
  } else if (own_variables) {
    r.error = file_name + " must name the file rank 0 writes NCCL's unique id to";
  } else if (store && *store) {
    r.id_store = store;
  } else {
    std::string what;
    for (char c : prefix) what += c == '_' ? '-' : static_cast<char>(std::tolower(c));
    r.id_file = launcher::rendezvous_file(at, what + "-nccl-id");
  }
  return r;
}

}  // namespace

const process_ranks& process_knobs(const std::string& prefix) {
  static std::mutex m;
  static std::map<std::string, process_ranks> read;  // node-stable: never erased
  std::lock_guard<std::mutex> guard(m);
  auto it = read.find(prefix);
  if (it == read.end()) it = read.emplace(prefix, read_knobs(prefix)).first;
  return it->second;
}

std::string process_communicator(const process_ranks& k, int device, comm* out) {
  static std::mutex m;
  static comm made = nullptr;
  static std::string failed;
  std::lock_guard<std::mutex> guard(m);
  if (made) {
    *out = made;
    return {};
  }
  if (!failed.empty()) return failed;  // a collective init is not retried
  std::string why;
  if (!library_loaded(&why)) return why;
  ncclUniqueId id{};
  failed = share_unique_id(k, &id);
  if (failed.empty()) {
    const device_guard keep;
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
      failed = std::string("cudaSetDevice before ncclCommInitRank: ") + cudaGetErrorName(e);
    } else {
      ncclComm_t c = nullptr;
      failed = named(lib().init_rank(&c, k.world, id, k.rank), "ncclCommInitRank");
      made = c;
    }
    if (k.rank == 0 && !k.id_file.empty()) std::remove(k.id_file.c_str());  // all have read it
  }
  *out = made;
  return failed;
}

std::string group_start() {
  return named(lib().group_start(), "ncclGroupStart");
}
std::string group_end() {
  return named(lib().group_end(), "ncclGroupEnd");
}
std::string send(const void* data, size_t bytes, int peer, comm c, cudaStream_t stream) {
  return named(lib().send(data, bytes, ncclUint8, peer, static_cast<ncclComm_t>(c), stream),
               "ncclSend");
}
std::string recv(void* data, size_t bytes, int peer, comm c, cudaStream_t stream) {
  return named(lib().recv(data, bytes, ncclUint8, peer, static_cast<ncclComm_t>(c), stream),
               "ncclRecv");
}
std::string all_gather(const void* data, void* into, size_t bytes, comm c, cudaStream_t stream) {
  return named(lib().all_gather(data, into, bytes, ncclUint8, static_cast<ncclComm_t>(c), stream),
               "ncclAllGather");
}
std::string all_reduce_min(const int* data, int* into, size_t count, comm c, cudaStream_t stream) {
  return named(
      lib().all_reduce(data, into, count, ncclInt32, ncclMin, static_cast<ncclComm_t>(c), stream),
      "ncclAllReduce");
}
std::string broadcast(const void* data, void* into, size_t bytes, int root, comm c,
                      cudaStream_t stream) {
  return named(
      lib().broadcast(data, into, bytes, ncclUint8, root, static_cast<ncclComm_t>(c), stream),
      "ncclBroadcast");
}

}  // namespace glabench::cuda_plugin::nccl

#else  // built without nccl.h: one GPU only

#include <cstdlib>
#include <map>
#include <mutex>

namespace glabench::cuda_plugin::nccl {
namespace {
constexpr const char* kNone = "built without nccl.h";
}
bool library_loaded(std::string* why) {
  if (why) *why = "built without nccl.h: one GPU only";
  return false;
}
int library_version() {
  return 0;
}
const process_ranks& process_knobs(const std::string& prefix) {
  static std::mutex m;
  static std::map<std::string, process_ranks> read;
  std::lock_guard<std::mutex> guard(m);
  auto it = read.find(prefix);
  if (it == read.end()) {
    process_ranks r;
    const std::string name = prefix + "_NCCL_WORLD";
    if (const char* env = std::getenv(name.c_str()); env && *env)
      r.error = name + " must be unset: this build has no nccl.h (one GPU only)";
    it = read.emplace(prefix, r).first;
  }
  return it->second;
}
std::string process_communicator(const process_ranks&, int, comm*) {
  return kNone;
}
std::string group_start() {
  return kNone;
}
std::string group_end() {
  return kNone;
}
std::string send(const void*, size_t, int, comm, cudaStream_t) {
  return kNone;
}
std::string recv(void*, size_t, int, comm, cudaStream_t) {
  return kNone;
}
std::string all_gather(const void*, void*, size_t, comm, cudaStream_t) {
  return kNone;
}
std::string all_reduce_min(const int*, int*, size_t, comm, cudaStream_t) {
  return kNone;
}
std::string broadcast(const void*, void*, size_t, int, comm, cudaStream_t) {
  return kNone;
}
}  // namespace glabench::cuda_plugin::nccl

#endif
