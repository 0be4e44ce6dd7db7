#include "mpi_rendezvous.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>

#if GLABENCH_WITH_CUDA
#include "id_store.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

namespace {

// The MPI calls, through either ABI: Open MPI's handles are pointers to its globals
// (ompi_mpi_comm_world, ompi_mpi_byte); the MPICH ABI's are ints (MPI_COMM_WORLD
// 0x44000000, MPI_BYTE 0x4c00010d), the values mpi.h fixes for MPICH, Intel MPI and
// MVAPICH.
struct mpi_calls {
  void* library = nullptr;
  bool open_mpi = false;
  int (*init)(int*, char***) = nullptr;
  int (*finalize)() = nullptr;
  void *comm_rank = nullptr, *comm_size = nullptr, *bcast = nullptr;
  void *world = nullptr, *byte = nullptr;  // Open MPI's handles

  int of_world(void* call, int* r) const {  // MPI_Comm_rank or MPI_Comm_size
    if (open_mpi) return reinterpret_cast<int (*)(void*, int*)>(call)(world, r);
    return reinterpret_cast<int (*)(int, int*)>(call)(0x44000000, r);
  }
  int broadcast(char* data, int n) const {
    if (open_mpi)
      return reinterpret_cast<int (*)(void*, int, void*, int, void*)>(bcast)(data, n, byte, 0,
                                                                             world);
    return reinterpret_cast<int (*)(void*, int, int, int, int)>(bcast)(data, n, 0x4c00010d, 0,
                                                                       0x44000000);
  }
};

bool load(const char* name, mpi_calls* c) {
  // RTLD_GLOBAL: Open MPI loads its components as plugins that resolve against libmpi.
  void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (!h) return false;
  c->library = h;
  c->open_mpi = dlsym(h, "ompi_mpi_comm_world") != nullptr;
  c->world = dlsym(h, "ompi_mpi_comm_world");
  c->byte = dlsym(h, "ompi_mpi_byte");
  c->init = reinterpret_cast<int (*)(int*, char***)>(dlsym(h, "MPI_Init"));
  c->finalize = reinterpret_cast<int (*)()>(dlsym(h, "MPI_Finalize"));
  c->comm_rank = dlsym(h, "MPI_Comm_rank");
  c->comm_size = dlsym(h, "MPI_Comm_size");
  c->bcast = dlsym(h, "MPI_Bcast");
  return c->init && c->finalize && c->comm_rank && c->comm_size && c->bcast &&
         (!c->open_mpi || c->byte);
}

}  // namespace

mpi_rendezvous_result share_id_store_by_mpi() {
  namespace nccl = cuda_plugin::nccl;
  mpi_rendezvous_result r;
  if (const char* had = std::getenv(nccl::kIdStoreVariable); had && *had)
    return r.note = "a store was given (GLABENCH_ID_STORE)", r;
  const mpi_choice choice = choose_mpi([](const char* n) { return std::getenv(n); });
  if (!choice.wanted) return r.note = choice.why_not, r;
  r.wanted = true;
  // GLABENCH_MPI_LIBRARY names the library; else Open MPI's or an MPICH-ABI soname.
  const char* named = std::getenv("GLABENCH_MPI_LIBRARY");
  mpi_calls mpi;
  const bool loaded = named && *named   ? load(named, &mpi)
                      : choice.open_mpi ? load("libmpi.so.40", &mpi) || load("libmpi.so", &mpi)
                                        : load("libmpi.so.12", &mpi) ||
                                              load("libmpi.so.40", &mpi) || load("libmpi.so", &mpi);
  if (!loaded) return r.note = "no MPI library to load (GLABENCH_MPI_LIBRARY names one)", r;
  if (mpi.init(nullptr, nullptr) != 0) return r.note = "MPI_Init failed", r;
  int rank = -1, size = 0;
  char address[512] = {};
  std::string why;
  if (mpi.of_world(mpi.comm_rank, &rank) != 0 || mpi.of_world(mpi.comm_size, &size) != 0)
    why = "MPI_Comm_rank or MPI_Comm_size failed";
  if (rank == 0) {  // every rank joins the broadcast, whatever rank 0 could serve
    const std::string served = nccl::serve_id_store(&why);
    if (served.size() < sizeof address) std::memcpy(address, served.data(), served.size());
  }
  if (mpi.broadcast(address, sizeof address) != 0) why = "MPI_Bcast failed", address[0] = 0;
  mpi.finalize();  // before any worker forks: MPI holds nothing while glabench runs
  const launcher::place& at = choice.at;
  if (address[0] && !same_world(rank, size, at.rank, at.world)) {
    why = fmt::format("MPI's world (rank {} of {}) is not {}'s ({} of {})", rank, size, at.launcher,
                      at.rank, at.world);
    address[0] = 0;
  }
  if (address[0]) {
    setenv(nccl::kIdStoreVariable, address, 1);
    r.used = true;
    r.note = mpi.open_mpi ? "Open MPI" : "an MPICH-ABI MPI";
  } else {
    r.note = why.empty() ? "rank 0 could not serve the id store" : why;
  }
  return r;
}

#else  // no CUDA: no NCCL, nothing to share

mpi_rendezvous_result share_id_store_by_mpi() {
  return {false, false, "built without CUDA: one process"};
}

#endif

}  // namespace glabench
