"""glabench's Python side: declare a kernel (`kernel`), verify and bench it from Python
(`verify`, `bench`), and the adapters that make fla's kernels and torch's SDPA backends
(`glabench.fla`, `glabench.sdpa`). `glabench.bridge` is what the bridge plugin calls.
See docs/python.md."""
from .kernel import Declaration, kernel

__all__ = ["Declaration", "kernel", "verify", "bench"]


def verify(*args, **kwargs):
    from .run import verify as run_verify
    return run_verify(*args, **kwargs)


def bench(*args, **kwargs):
    from .run import bench as run_bench
    return run_bench(*args, **kwargs)
