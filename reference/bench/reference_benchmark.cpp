// Wall time of the fp64 reference (it is the oracle, not a contender, but its speed
// decides how large a fixture anyone can afford to make). Default: gla forward and
// forward+backward at the seed's shape B4 T1024 H4 K=V=100.
#include <benchmark/benchmark.h>

#include "glabench/reference/ops.hpp"
#include "glabench/reference/random_inputs.hpp"

namespace {

using namespace glabench;

problem seed_problem(op_kind op) {
  return {op, 4, 1024, 4, 100, 100, 0.1, true};
}

void forward(benchmark::State& state, op_kind op) {
  const problem p = seed_problem(op);
  const op_inputs in = make_random_inputs(p, {});
  for (auto _ : state) benchmark::DoNotOptimize(reference::forward(p, in));
}

void forward_backward(benchmark::State& state, op_kind op) {
  const problem p = seed_problem(op);
  const op_inputs in = make_random_inputs(p, {});
  for (auto _ : state) {
    benchmark::DoNotOptimize(reference::forward(p, in));
    benchmark::DoNotOptimize(reference::backward(p, in));
  }
}

BENCHMARK_CAPTURE(forward, gla_b4_t1024_h4_d100, op_kind::gla)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(forward_backward, gla_b4_t1024_h4_d100, op_kind::gla)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(forward_backward, rwkv6_b4_t1024_h4_d100, op_kind::rwkv6)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
