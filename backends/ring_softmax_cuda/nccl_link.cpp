// NCCL for the multi-GPU ring (nccl_link.hpp), resolved with dlopen/dlsym.
#include "nccl_link.hpp"

#if GLABENCH_RING_HAVE_NCCL

#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "../common/device_guard.hpp"
#include "../common/int_knob.hpp"
#include "glabench/launcher.hpp"

namespace glabench::ring::nccl {
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

// A rank or world knob: 0 to 4096, −1 when unset.
int int_knob(const char* name, std::string* error) {
  return cuda_plugin::int_knob(name, 0, 4096, -1, error);
}

// Rank 0 writes the id to a temporary file beside it and renames it into place, so a
// reader never sees half an id; the others wait for the file (up to 120 s). The temporary
// file is created by mkstemp (O_CREAT | O_EXCL, mode 0600, a name nobody can predict):
// it never follows a symlink or writes into a file someone else put there.
std::string share_unique_id(const process_ranks& k, ncclUniqueId* id) {
  if (k.rank == 0) {
    if (std::string e = named(lib().get_unique_id(id), "ncclGetUniqueId"); !e.empty()) return e;
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
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    std::ifstream f(k.id_file, std::ios::binary);
    if (f && f.read(id->internal, sizeof id->internal) && f.gcount() == sizeof id->internal)
      return {};
    if (std::chrono::steady_clock::now() > give_up)
      return "RING_SOFTMAX_CUDA_NCCL_ID_FILE " + k.id_file +
             ": no unique id from rank 0 within 120 s";
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

// One process per rank from the launcher's own variables (torchrun, mpirun, srun:
// glabench/launcher.hpp), NCCL's unique id in RING_SOFTMAX_CUDA_NCCL_ID_FILE where set,
// else in the node's rendezvous file (one node).
process_ranks launched_ranks() {
  process_ranks r;
  const launcher::place at = launcher::launcher_place();
  if (!at.error.empty()) {
    r.error = at.launcher + ": " + at.error;
    return r;
  }
  if (at.world <= 1) return r;
  const char* file = std::getenv("RING_SOFTMAX_CUDA_NCCL_ID_FILE");
  r.world = at.world;
  r.rank = at.rank;
  r.id_file = file && *file ? file : launcher::rendezvous_file(at, "ring-nccl-id");
  return r;
}

const process_ranks& process_knobs() {
  static const process_ranks k = [] {
    process_ranks r;
    const int world = int_knob("RING_SOFTMAX_CUDA_NCCL_WORLD", &r.error);
    if (world < 0 && r.error.empty()) return launched_ranks();  // unset: the launcher's, or one
    const int rank = int_knob("RING_SOFTMAX_CUDA_NCCL_RANK", &r.error);
    const char* file = std::getenv("RING_SOFTMAX_CUDA_NCCL_ID_FILE");
    if (!r.error.empty()) return r;
    if (world < 1)
      r.error = "RING_SOFTMAX_CUDA_NCCL_WORLD must be at least 1";
    else if (rank < 0 || rank >= world)
      r.error =
          "RING_SOFTMAX_CUDA_NCCL_RANK must be set, from 0 to RING_SOFTMAX_CUDA_NCCL_WORLD − 1";
    else if (!file || !*file)
      r.error =
          "RING_SOFTMAX_CUDA_NCCL_ID_FILE must name the file rank 0 writes NCCL's unique id to";
    if (!r.error.empty()) return r;
    r.world = world;
    r.rank = rank;
    r.id_file = file;
    return r;
  }();
  return k;
}

std::string process_communicator(int device, comm* out) {
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
  const process_ranks& k = process_knobs();
  ncclUniqueId id{};
  failed = share_unique_id(k, &id);
  if (failed.empty()) {
    const cuda_plugin::device_guard keep;
    cudaSetDevice(device);
    ncclComm_t c = nullptr;
    failed = named(lib().init_rank(&c, k.world, id, k.rank), "ncclCommInitRank");
    made = c;
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

}  // namespace glabench::ring::nccl

#else  // built without nccl.h: one GPU only

#include <cstdlib>

namespace glabench::ring::nccl {
bool library_loaded(std::string* why) {
  if (why) *why = "built without nccl.h: the ring runs on one GPU only";
  return false;
}
int library_version() {
  return 0;
}
const process_ranks& process_knobs() {
  static const process_ranks k = [] {
    process_ranks r;
    if (const char* env = std::getenv("RING_SOFTMAX_CUDA_NCCL_WORLD"); env && *env)
      r.error =
          "RING_SOFTMAX_CUDA_NCCL_WORLD must be unset: this build has no nccl.h (one GPU only)";
    return r;
  }();
  return k;
}
std::string process_communicator(int, comm*) {
  return "built without nccl.h";
}
std::string group_start() {
  return "built without nccl.h";
}
std::string group_end() {
  return "built without nccl.h";
}
std::string send(const void*, size_t, int, comm, cudaStream_t) {
  return "built without nccl.h";
}
std::string recv(void*, size_t, int, comm, cudaStream_t) {
  return "built without nccl.h";
}
}  // namespace glabench::ring::nccl

#endif
