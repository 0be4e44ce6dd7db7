// How a multi-GPU backend's ranks reach each other across processes: NCCL, loaded at run
// time (libnccl.so.2 on the library path, e.g. a PyTorch environment's nvidia-nccl
// package), never linked, so a plugin loads and runs on one GPU without it. NCCL joins
// ranks only with one process per rank. A process learns its rank and world from the
// launcher's own variables (torchrun, mpirun, srun: glabench/launcher.hpp) or, where those
// are unset, from the backend's <PREFIX>_NCCL_WORLD and <PREFIX>_NCCL_RANK. Rank 0 leaves
// NCCL's unique id, and the others take it, in a file, <PREFIX>_NCCL_ID_FILE (required
// with the backend's variables; may sit on a shared filesystem, which is how one path
// spans nodes); else in the id store that MPI's rendezvous gave every rank (mpirun, srun
// with an MPI plugin: id_store.hpp, harness/src/mpi_rendezvous.hpp), across nodes; else
// in the launcher's node-local rendezvous file. Then each calls ncclCommInitRank. One
// process driving every GPU moves data with the copy engines instead, and needs no NCCL.
// Used by ring_softmax_cuda (RING_SOFTMAX_CUDA) and chunked_fuse_cuda (CHUNKED_FUSE_CUDA),
// each plugin its own copy, and by glabench itself (GLABENCH: bench's decisions across
// processes). Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace glabench::cuda_plugin::nccl {

// An opaque communicator (ncclComm_t).
using comm = void*;

// Whether NCCL is loaded (tried once), and why not. Always false in a build without
// nccl.h.
bool library_loaded(std::string* why);
// The loaded NCCL's version code, e.g. 22809 for 2.28.9; 0 when none.
int library_version();

// This process's place among the ranks: world > 1 for one process per rank.
struct process_ranks {
  int world = 1, rank = 0;
  std::string id_file;   // where rank 0 leaves NCCL's unique id, or
  std::string id_store;  // the store MPI's rendezvous named (id_store.hpp), keyed by
  std::string key;       // the prefix
  std::string error;     // a variable refused
};
// Read once per prefix ("RING_SOFTMAX_CUDA", "CHUNKED_FUSE_CUDA").
const process_ranks& process_knobs(const std::string& prefix);

// This process's one communicator (made once, on `device`, among the first call's `ranks`;
// a process uses one prefix). Once every rank has joined, rank 0 removes the id file, so a
// later communicator (another worker of the same job) does not read this one's id; a file
// older than this glabench run (GLABENCH_STARTED) is not read either.
std::string process_communicator(const process_ranks& ranks, int device, comm* out);

// In bytes; point-to-point between group_start and group_end (every rank's operations of
// one exchange in one group when one thread drives several ranks).
std::string group_start();
std::string group_end();
std::string send(const void* data, size_t bytes, int peer, comm c, cudaStream_t stream);
std::string recv(void* data, size_t bytes, int peer, comm c, cudaStream_t stream);
// Every rank's `bytes` from `data` into `into`, rank by rank (ncclAllGather).
std::string all_gather(const void* data, void* into, size_t bytes, comm c, cudaStream_t stream);
// The smallest of every rank's `count` ints at `data`, into `into` (ncclAllReduce, min).
std::string all_reduce_min(const int* data, int* into, size_t count, comm c, cudaStream_t stream);
// `root`'s `bytes` at `data` into `into` on every rank (ncclBroadcast; `data` read on the
// root only).
std::string broadcast(const void* data, void* into, size_t bytes, int root, comm c,
                      cudaStream_t stream);

}  // namespace glabench::cuda_plugin::nccl
