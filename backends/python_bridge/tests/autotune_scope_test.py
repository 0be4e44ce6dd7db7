#!/usr/bin/env python3
"""glabench.autotune_scope on the CPU (ctest python_bridge/autotune_scope): a Triton autotuner
under the scope chooses once per shape and keeps each shape's choice; the on-disk cache's
key text names the shape while the key still equals Triton's own; a bad
GLABENCH_AUTOTUNE_SCOPE is refused. Triton runs its interpreter (TRITON_INTERPRET=1) and the
benchmark is a stub whose timings favour one configuration per shape. Exit 77 (skipped)
where torch or Triton is not installed."""
import copy
import json
import os
import pickle
import sys

os.environ["TRITON_INTERPRET"] = "1"
try:
    import torch
    import triton
    import triton.language as tl
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

from glabench import autotune_scope as scope

failures = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


os.environ["GLABENCH_AUTOTUNE_SCOPE"] = "bogus"
try:
    scope.mode()
    expect(False, "GLABENCH_AUTOTUNE_SCOPE=bogus is refused")
except ValueError as e:
    expect("GLABENCH_AUTOTUNE_SCOPE" in str(e), f"GLABENCH_AUTOTUNE_SCOPE=bogus is refused ({e})")
os.environ["GLABENCH_AUTOTUNE_SCOPE"] = "kernel"
expect(not scope.install() and not scope.installed(), "scope 'kernel' installs nothing")
del os.environ["GLABENCH_AUTOTUNE_SCOPE"]
expect(scope.install() and scope.installed(), "the default scope, 'shape', installs")

FAST = {"small": 16, "large": 32}  # the BLOCK the stub benchmark favours at each shape
benched = []


def stub_bench(kernel_call, quantiles):
    kernel_call()
    return [1.0, 1.0, 1.0]


@triton.jit
def add_one(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.load(x + i, mask=i < n) + 1, mask=i < n)


def timed_config(config):
    """The stub's timing of `config` at the current shape: the favoured BLOCK is fastest."""
    benched.append((scope._shape, config.kwargs["BLOCK"]))
    return 1.0 if config.kwargs["BLOCK"] == FAST[scope._shape[0]] else 2.0


configs = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})]
tuned = triton.autotune(configs=configs, key=["n"], do_bench=stub_bench)(add_one)
tuned._bench = lambda *args, config, **kwargs: [timed_config(config)] * 3
expect(isinstance(tuned.cache, scope.ScopedCache), "a new autotuner's cache is scoped")

x = torch.arange(100, dtype=torch.float32)
y = torch.empty_like(x)


def call_at(shape):
    scope.enter(shape)
    tuned[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100)
    return tuned.best_config.kwargs["BLOCK"]


expect(call_at(("small",)) == 16 and len(benched) == 2, "the first shape is benchmarked")
expect(bool(torch.equal(y, x + 1)), "the kernel ran")
expect(call_at(("large",)) == 32 and len(benched) == 4,
       "a second shape with the same Triton key is benchmarked again and chooses its own")
expect(call_at(("small",)) == 16 and len(benched) == 4, "back at the first shape: its choice, "
       "no benchmark")
expect(len(tuned.cache) == 2, "the cache holds one choice per shape")

tuning_key = next(iter(dict.keys(tuned.cache)))[1]  # Triton's own key: n and the dtypes
for how, copied in (("copy", copy.copy(tuned.cache)), ("deepcopy", copy.deepcopy(tuned.cache)),
                    ("pickle", pickle.loads(pickle.dumps(tuned.cache)))):
    scope.enter(("large",))
    large = copied.get(tuning_key)
    scope.enter(("small",))
    small = copied.get(tuning_key)
    expect(small is not None and large is not None and small.kwargs["BLOCK"] == 16 and
           large.kwargs["BLOCK"] == 32, f"a {how} of the cache keeps each shape's choice")

scope.enter(("small",))
key = scope.ShapedKey((100, "torch.float32"))
expect(key == (100, "torch.float32") and hash(key) == hash((100, "torch.float32")),
       "the disk cache's key equals Triton's own")
expect("small" in str(key) and json.loads(json.dumps({"key": key}))["key"] == [100,
       "torch.float32"], "its text names the shape; it is written as Triton's own")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
