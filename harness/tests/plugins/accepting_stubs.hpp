// The table members every test plugin shares: it can run here, accepts every problem
// and needs no workspace. Each plugin brings its own forward (and backward).
#pragma once

#include "glabench/backend.h"

namespace test_plugin {

inline glabench_status device_available(glabench_message*) {
  return GLABENCH_OK;
}
inline glabench_status supports(const glabench_problem*, glabench_mode, glabench_message*) {
  return GLABENCH_OK;
}
inline glabench_status workspace_size(const glabench_problem*, glabench_mode, size_t* bytes,
                                      glabench_message*) {
  *bytes = 0;
  return GLABENCH_OK;
}

}  // namespace test_plugin
