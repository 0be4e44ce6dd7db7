// How a child process ended, in the words glabench's messages use: "was killed by signal 11
// (Segmentation fault)", "exited with code 3". For the fixture reader's contained read
// (contained_run.cpp) and the isolation worker (worker_process.cpp).
#pragma once

#include <string>

namespace glabench {

// `status` as waitpid gave it; "ended" where it is neither a signal nor an exit.
std::string how_child_ended(int status);

}  // namespace glabench
