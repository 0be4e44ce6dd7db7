"""The Triton kernel's test, as it would sit in the author's own repository: glabench
verifies it on glabench's committed gla fixtures (every dtype it declares), and, on a
GPU, benches it beside nothing but itself. Runs under pytest, or as a script."""
import os
import sys

import glabench

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triton_gla  # noqa: E402


def test_verifies_on_the_committed_fixtures():
    result = glabench.verify(triton_gla.gla, ops=["gla"], name="triton_gla")
    assert result.passed, result.table()
    ran = [r for r in result.rows if r["status"] != "unsupported"]
    assert ran and all(r["status"] == "passed" for r in ran), result.table()
    # It declares no varlen=True: the packed batches are the cases it is not offered.
    assert all("varlen" in r["fixture"] for r in result.rows if r not in ran), result.table()


def test_benches_on_a_gpu():
    if triton_gla.INTERPRETED:
        return  # the bench times GPU work
    result = glabench.bench(triton_gla.gla, name="triton_gla",
                            args=["--op", "gla", "--mode", "fwd", "--dtype", "bf16",
                                  "--shape", "2,1024,8,64,64"])
    assert result.passed, result.output
    assert all(r["status"] == "ok" for r in result.rows), result.table()


if __name__ == "__main__":
    for name, test in list(globals().items()):
        if name.startswith("test_"):
            test()
            print("ok", name)
