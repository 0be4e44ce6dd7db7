#include "verifier.hpp"

#include <chrono>

#include "backend_runner.hpp"
#include "glabench/backend_support.hpp"
#include "glabench/reference/ops.hpp"

namespace glabench {
namespace {

// The inputs as the backend sees them: each tensor rounded to its dtype, h0 and dht to
// the state dtype (ABI 1.5), the others to the storage dtype.
op_inputs rounded_inputs(const op_inputs& in, dtype d, dtype state) {
  op_inputs r;
  r.q = round_to(in.q, d);
  r.k = round_to(in.k, d);
  r.v = round_to(in.v, d);
  if (!in.g.empty()) r.g = round_to(in.g, d);
  if (!in.u.empty()) r.u = round_to(in.u, d);
  if (in.h0) r.h0 = round_to(*in.h0, state);
  if (in.d_o) r.d_o = round_to(*in.d_o, d);
  if (in.dht) r.dht = round_to(*in.dht, state);
  return r;
}

// Each tensor is judged in the dtype it comes back in (tensor_check.hpp: what that dtype
// cannot hold is credited).
void compare_outputs(const problem& p, const op_outputs& got, const op_outputs& want, double tol,
                     const output_dtypes& in, std::vector<tensor_check>& checks) {
  checks.push_back(compare_tensor("o", got.o, want.o, tol, in.of("o")));
  if (p.has_state()) checks.push_back(compare_tensor("ht", got.ht, want.ht, tol, in.of("ht")));
  if (p.op == op_kind::softmax_attn)
    checks.push_back(compare_tensor("lse", got.lse, want.lse, tol, in.of("lse")));
}

}  // namespace

verify_case_result verify_case(const loaded_backend& backend, const fixture& f, dtype storage,
                               const verify_options& opts) {
  const auto start = std::chrono::steady_clock::now();
  verify_case_result r;
  r.backend = backend.name();
  r.fixture = f.name();
  r.fixture_path = f.path;
  r.op = f.prob.op;
  r.storage = storage;
  r.devices = opts.devices;
  if (f.prob.has_state()) r.state_storage = backend.state_dtype(storage);
  auto finish = [&]() -> verify_case_result {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };

  if (!backend.supports(f.prob.op, storage, GLABENCH_MODE_FORWARD)) {
    r.status = case_status::unsupported;
    r.message =
        "no " + std::string(op_name(f.prob.op)) + " forward in " + std::string(dtype_name(storage));
    return finish();
  }
  const bool with_backward =
      f.has_gradients() && backend.supports(f.prob.op, storage, GLABENCH_MODE_BACKWARD);
  if (f.has_gradients() && !with_backward)
    r.message = "the backend has no backward here; gradients not checked";

  const double tol = opts.tolerance.value_or(default_tolerance(storage));
  const bool has_h0 = f.inputs.h0.has_value();
  try {
    // The backend's prepare() (ABI 1.2) runs with each upload: before forward, and again
    // with the backward's arguments before backward and each finite-difference call.
    backend_runner runner(backend, f.prob, storage, has_h0, with_backward, opts.devices);
    const op_inputs seen = rounded_inputs(f.inputs, storage, backend.state_dtype(storage));
    // Expected values on exactly the inputs the backend saw.
    op_outputs want = f.expected;
    std::optional<op_gradients> want_grads = f.expected_grads;
    if (storage != dtype::fp64) {
      want = reference::forward(f.prob, seen);
      if (with_backward) want_grads = reference::backward(f.prob, seen);
    }

    const output_dtypes returned{storage, backend.state_dtype(storage)};
    compare_outputs(f.prob, runner.forward(seen), want, tol, returned, r.checks);
    if (with_backward) {
      op_gradients got = runner.backward(seen);
      auto got_refs = gradient_tensors(f.prob, has_h0, got);
      auto want_refs = gradient_tensors(f.prob, has_h0, *want_grads);
      for (size_t i = 0; i < got_refs.size(); ++i)
        r.checks.push_back(compare_tensor(got_refs[i].name, *got_refs[i].value, *want_refs[i].value,
                                          tol, returned.of(got_refs[i].name)));
    }
    if (opts.gradcheck && with_backward && storage == dtype::fp64) {
      const reference::differentiable_op through_abi{
          [&](const op_inputs& x) { return runner.forward(x); },
          [&](const op_inputs& x) { return runner.backward(x); }};
      r.gradcheck = reference::gradcheck(f.prob, seen, through_abi);
    }
  } catch (const backend_call_error& e) {
    r.status = status_of(e);
    r.message = e.what();
    return finish();
  } catch (const std::exception& e) {
    r.status = case_status::failed;
    r.message = e.what();
    return finish();
  }

  bool ok = !r.checks.empty();
  for (const auto& c : r.checks) ok = ok && c.passed;
  if (r.gradcheck) ok = ok && r.gradcheck->passed;
  r.status = ok ? case_status::passed : case_status::failed;
  return finish();
}

int verify_exit_code(const std::vector<verify_case_result>& results) {
  std::vector<case_status> statuses;
  for (const auto& r : results) statuses.push_back(r.status);
  return cases_exit_code(statuses);
}

}  // namespace glabench
