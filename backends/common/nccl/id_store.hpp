// Where rank 0 leaves each communicator's NCCL unique id for the other ranks when a
// launcher's rendezvous gave every rank one address (harness/src/mpi_rendezvous.cpp: MPI,
// under mpirun or srun): a small store that rank 0's glabench serves over TCP for its
// whole run. Its workers and those of every other rank, on any node, put and get ids
// there; no filesystem is shared.
//
// A rank's get of a key returns rank 0's newest put of it that this rank has not taken,
// waiting for one. A job's ranks make their communicators in the same order (one a
// worker, the workers in the same order), and each one's init is collective, so rank 0
// cannot put the next id before every rank took this one; a rank whose worker failed
// before taking one takes the newest next time, not the one it missed. A request carries
// the store's token (random, sent with the address), so a process that did not receive
// the address cannot read or write ids. Plain C++ and POSIX sockets.
#pragma once

#include <string>

namespace glabench::cuda_plugin::nccl {

// The variable that hands the store to workers: "HOST:PORT:TOKEN".
constexpr const char* kIdStoreVariable = "GLABENCH_ID_STORE";

// Serves a store from this process (a detached thread, until the process exits) on every
// interface, on a port the system picks; returns its address "HOST:PORT:TOKEN", or empty
// with *error set. HOST: GLABENCH_ID_STORE_HOST where set, else this node's hostname (where
// it resolves) and its non-loopback IPv4 addresses, comma-separated, which a client tries
// in turn (a connect gives up on one after 5 s).
std::string serve_id_store(std::string* error);

// Rank 0: puts `bytes` (n of them) under `key` at `address`. Another rank: gets the newest
// value of `key` it has not taken into `bytes`, waiting up to `timeout_s` for rank 0 to
// put one. Each returns empty on success, else what failed.
std::string id_store_put(const std::string& address, const std::string& key, const char* bytes,
                         int n);
std::string id_store_get(const std::string& address, const std::string& key, int rank, char* bytes,
                         int n, int timeout_s = 120);

}  // namespace glabench::cuda_plugin::nccl
