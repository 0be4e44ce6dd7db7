// Running a piece of work once in a forked child process, so that a crash inside a library
// it calls ends the child, not glabench. The fixture reader's guard against a hostile file
// on which libhdf5 itself crashes (fixture_reader.cpp): the child reads the file first;
// only where that ended normally does glabench read it itself, and the same read then
// ends the same way.
//
// The child runs ordinary code after fork (malloc, file reads) in a process that may have
// other threads: glibc's malloc is fork-safe, and the work must not need a lock another
// thread may hold (libhdf5, which one thread uses, does not). Its effects stay in the
// child, which ends with _exit (no atexit handlers, no flushed stdio buffers). In the
// child a crash is not caught by any handler: the child is killed by its signal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace glabench {

struct contained_outcome {
  bool ended_normally = true;  // the work returned or threw (in the child), or ran unguarded
  std::string how;             // else how the child ended: "was killed by signal 11 (...)"
  std::string message;         // what the work returned in the child (at most 64 KiB)
};

// Runs `work` in a child and waits for it, killing it after `limit_s` seconds. With
// `max_more_bytes` > 0 the child's address space may grow by that much beyond what it
// had when it started (RLIMIT_AS), so work that allocates without bound (libhdf5 on some
// malformed files) fails there instead of taking the machine's memory. Where no child can
// be started (pipe or fork fails), nothing runs and the outcome is normal, with no
// message: the caller's own run is then unguarded.
contained_outcome run_contained(const std::function<std::string()>& work, double limit_s,
                                uint64_t max_more_bytes = 0);

}  // namespace glabench
