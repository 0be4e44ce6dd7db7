#include "decode_drift.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "backend_runner.hpp"
#include "gate_regime.hpp"
#include "glabench/reference/ops.hpp"
#include "glabench/reference/random_inputs.hpp"
#include "tensor_check.hpp"

namespace glabench {
namespace {

// Token t of a [B,T,H,D] tensor, as a [B,1,H,D] one.
tensor token_at(const tensor& x, int64_t t) {
  const int64_t B = x.shape[0], T = x.shape[1], row = x.shape[2] * x.shape[3];
  tensor out({B, 1, x.shape[2], x.shape[3]});
  for (int64_t b = 0; b < B; ++b)
    std::copy_n(x.data.begin() + (b * T + t) * row, row, out.data.begin() + b * row);
  return out;
}

// The whole chain's inputs, drawn as one problem of T = steps tokens and rounded as the
// backend sees them: the tokens and u to the storage dtype, h0 to the state dtype.
op_inputs chain_inputs(const problem& chain, const gate_regime& regime, dtype storage, dtype state,
                       uint64_t seed) {
  random_problem_options ro;
  ro.gates = regime.kind;
  ro.with_h0 = true;
  ro.with_do = false;
  ro.seed = seed;
  const op_inputs drawn = make_random_inputs(chain, ro);
  op_inputs in;
  in.q = round_to(drawn.q, storage);
  in.k = round_to(drawn.k, storage);
  in.v = round_to(drawn.v, storage);
  in.g = round_to(drawn.g, storage);
  if (chain.has_bonus()) in.u = round_to(drawn.u, storage);
  in.h0 = round_to(*drawn.h0, state);
  return in;
}

// Step t's inputs (T = 1) from h0 `state`.
op_inputs step_inputs(const op_inputs& chain, int64_t t, const tensor& state) {
  op_inputs in;
  in.q = token_at(chain.q, t);
  in.k = token_at(chain.k, t);
  in.v = token_at(chain.v, t);
  in.g = token_at(chain.g, t);
  in.u = chain.u;
  in.h0 = state;
  return in;
}

}  // namespace

std::vector<int64_t> drift_checkpoints(int64_t steps) {
  std::vector<int64_t> at;
  for (int64_t s = 1; s < steps; s *= 4) at.push_back(s);
  at.push_back(steps);
  return at;
}

decode_drift_result decode_drift_case(const loaded_backend& backend, op_kind op, dtype storage,
                                      const std::string& gates, const decode_drift_options& opts) {
  decode_drift_result r;
  r.backend = backend.name();
  r.op = op;
  r.storage = storage;
  r.state_storage = backend.state_dtype(storage);
  r.gates = gates;
  r.steps = opts.steps;
  r.threshold = opts.tolerance.value_or(default_tolerance(storage));
  r.devices = opts.devices;
  return r;
}

decode_drift_result run_decode_drift(const loaded_backend& backend, op_kind op, dtype storage,
                                     const std::string& gates, const decode_drift_options& opts) {
  const auto start = std::chrono::steady_clock::now();
  decode_drift_result r = decode_drift_case(backend, op, storage, gates, opts);
  auto finish = [&]() -> decode_drift_result {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  const gate_regime* regime = find_gate_regime(gates);
  if (op == op_kind::softmax_attn || !regime || opts.steps < 1)
    throw std::invalid_argument("decode drift: needs gla or rwkv6, a gate regime and a step");
  if (!backend.supports(op, storage, GLABENCH_MODE_FORWARD)) {
    r.status = case_status::unsupported;
    r.message = backend.forward_dtypes(op).empty()
                    ? fmt::format("no {} forward in any dtype", op_name(op))
                    : fmt::format("no {} forward in {}", op_name(op), dtype_name(storage));
    return finish();
  }

  const std::vector<int64_t> checkpoints = drift_checkpoints(opts.steps);
  try {
    const double scale = 1.0 / std::sqrt(double(opts.K));
    const problem step{op, opts.B, 1, opts.H, opts.K, opts.V, scale, true, {}};
    backend_runner runner(backend, step, storage, /*has_h0=*/true, /*need_backward=*/false,
                          opts.devices);
    problem chain = step;
    chain.T = opts.steps;
    const op_inputs in = chain_inputs(chain, *regime, storage, r.state_storage, opts.seed);
    // The backend's state holds values of its state dtype; an fp64 tensor holds each
    // exactly, and uploading it again in that dtype gives back the very bits it returned.
    tensor state = *in.h0, truth_state = *in.h0;
    for (int64_t t = 0; t < opts.steps; ++t) {
      op_inputs x = step_inputs(in, t, state);
      op_outputs got = runner.forward(x);
      x.h0 = std::move(truth_state);
      op_outputs want = reference::forward(step, x);
      const tensor_check o = compare_tensor("o", got.o, want.o, r.threshold);
      const tensor_check s = compare_tensor("ht", got.ht, want.ht, r.threshold);
      const drift_point now{t + 1, o.rel_l2, s.rel_l2};
      if (std::binary_search(checkpoints.begin(), checkpoints.end(), now.step) ||
          !(o.finite && s.finite))
        r.checkpoints.push_back(now);
      if (!(o.finite && s.finite)) {
        r.status = case_status::failed;
        r.message = fmt::format("step {}: {} not finite", now.step,
                                !o.finite ? describe_failure(o) : describe_failure(s));
        return finish();
      }
      r.steps_run = now.step;
      if (now.o_rel_l2 > r.max_o_rel_l2 || r.max_o_step == 0) {
        r.max_o_rel_l2 = now.o_rel_l2;
        r.max_o_step = now.step;
      }
      if (now.state_rel_l2 > r.max_state_rel_l2 || r.max_state_step == 0) {
        r.max_state_rel_l2 = now.state_rel_l2;
        r.max_state_step = now.step;
      }
      state = std::move(got.ht);
      truth_state = std::move(want.ht);
    }
  } catch (const backend_call_error& e) {
    r.status = status_of(e);
    r.message = r.status == case_status::failed && r.steps_run < opts.steps
                    ? fmt::format("step {}: {}", r.steps_run + 1, e.what())
                    : e.what();
    return finish();
  } catch (const std::exception& e) {
    r.status = case_status::failed;
    r.message = e.what();
    return finish();
  }

  std::vector<std::string> over;
  if (!(r.max_o_rel_l2 <= r.threshold))
    over.push_back(fmt::format("o rel_l2 {:.3g} at step {}", r.max_o_rel_l2, r.max_o_step));
  if (!(r.max_state_rel_l2 <= r.threshold))
    over.push_back(
        fmt::format("state rel_l2 {:.3g} at step {}", r.max_state_rel_l2, r.max_state_step));
  if (!over.empty()) {
    r.status = case_status::failed;
    r.message = fmt::format("drifted past the limit {:.3g}: {}", r.threshold,
                            over.size() == 1 ? over[0] : over[0] + "; " + over[1]);
  }
  return finish();
}

}  // namespace glabench
