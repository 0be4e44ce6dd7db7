// Runs fn(i) for i in [0, n) on all hardware threads. The reference parallelises over
// the B×H independent (batch, head) problems with it.
#pragma once

#include <cstdint>
#include <functional>

namespace glabench::reference {

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace glabench::reference
