// How the ranks of the multi-GPU ring reach each other: NCCL, loaded at run time
// (libnccl.so.2 on the library path, e.g. a PyTorch environment's nvidia-nccl package),
// never linked, so the plugin loads and runs on one GPU without it. NCCL joins the ranks
// only with one process per rank (RING_SOFTMAX_CUDA_NCCL_RANK / _WORLD / _ID_FILE): rank 0
// writes NCCL's unique id to the file, the others read it, and each calls
// ncclCommInitRank. The file may sit on a shared filesystem, which is how the same path
// spans nodes. One process driving every GPU of the call's device list moves data with
// the copy engines instead (ranks_exchange.cpp), and needs no NCCL.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace glabench::ring::nccl {

// An opaque communicator (ncclComm_t) and the library's calls the ring uses.
using comm = void*;

// Whether NCCL is loaded (tried once), and why not. Always false in a build without
// nccl.h.
bool library_loaded(std::string* why);
// The loaded NCCL's version code, e.g. 22809 for 2.28.9; 0 when none.
int library_version();

// The multi-process knobs: world > 1 when RING_SOFTMAX_CUDA_NCCL_WORLD names one.
struct process_ranks {
  int world = 1, rank = 0;
  std::string id_file;
  std::string error;  // a knob refused
};
const process_ranks& process_knobs();

// This process's one communicator in the multi-process world (made once, on `device`).
std::string process_communicator(int device, comm* out);

// Point-to-point, in bytes; between group_start and group_end (every rank's operations
// of one exchange in one group when one thread drives several ranks).
std::string group_start();
std::string group_end();
std::string send(const void* data, size_t bytes, int peer, comm c, cudaStream_t stream);
std::string recv(void* data, size_t bytes, int peer, comm c, cudaStream_t stream);

}  // namespace glabench::ring::nccl
