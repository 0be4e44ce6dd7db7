// Run by mpi_rendezvous_test.sh under mpirun: glabench's MPI rendezvous, then three ids
// through the store it shares, from rank 0 to every other rank, one round at a time.
// Argument `used` or `unused`: whether the rendezvous should have run. Exit 0 when all
// agrees.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "glabench/launcher.hpp"
#include "id_store.hpp"
#include "mpi_rendezvous.hpp"

namespace nccl = glabench::cuda_plugin::nccl;

int main(int argc, char** argv) {
  const bool expect = argc == 2 && std::string(argv[1]) == "used";
  const glabench::launcher::place place = glabench::launcher::launcher_place();
  const int rank = place.rank, world = place.world;
  const auto r = glabench::share_id_store_by_mpi();
  std::printf("rank %d: %s (%s)\n", rank, r.used ? "store shared" : "no store", r.note.c_str());
  if (r.used != expect) return 1;
  if (!r.used) return 0;
  const std::string at = std::getenv(nccl::kIdStoreVariable);
  // Three rounds, as three communicators' inits: rank 0 puts an id, every other rank takes
  // it and acknowledges (the init's collective step), before the next.
  char id[128], ack = 1;
  for (int n = 0; n < 3; ++n) {
    if (rank == 0) {
      for (int b = 0; b < 128; ++b) id[b] = static_cast<char>(n + b);
      if (std::string e = nccl::id_store_put(at, "CHECK", id, 128); !e.empty())
        return std::printf("rank 0: %s\n", e.c_str()), 1;
      for (int other = 1; other < world; ++other)
        if (std::string e = nccl::id_store_get(at, "ACK" + std::to_string(other), 0, &ack, 1, 60);
            !e.empty())
          return std::printf("rank 0: %s\n", e.c_str()), 1;
    } else {
      if (std::string e = nccl::id_store_get(at, "CHECK", rank, id, 128, 60); !e.empty())
        return std::printf("rank %d: %s\n", rank, e.c_str()), 1;
      for (int b = 0; b < 128; ++b)
        if (id[b] != static_cast<char>(n + b))
          return std::printf("rank %d: id %d differs at byte %d\n", rank, n, b), 1;
      if (std::string e = nccl::id_store_put(at, "ACK" + std::to_string(rank), &ack, 1); !e.empty())
        return std::printf("rank %d: %s\n", rank, e.c_str()), 1;
    }
  }
  if (rank != 0) return 0;
  std::printf("rank 0: %d ranks took 3 ids each\n", world - 1);
  return 0;
}
