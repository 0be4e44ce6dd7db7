"""glabench from Python: verify or bench a kernel by running the glabench tool.

    import glabench
    result = glabench.verify(my_gla)          # every committed gla fixture, each dtype
    assert result.passed, result.table()

The callable must be importable: by its module (`module:qualname`), or, for one defined in
a script or a test file, by its file. The tool is the `glabench` on PATH, or the one the
GLABENCH environment variable or the `tool` argument names. The child sees this process's
sys.path (as PYTHONPATH), so it imports what this process imports.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Callable, Iterable, Optional, Sequence, Union

Kernel = Union[Callable, str]


@dataclasses.dataclass
class Result:
    """What one glabench run said: its exit code, the results document and the console."""
    returncode: int
    document: dict
    output: str

    @property
    def rows(self) -> list:
        return self.document.get("results", [])

    @property
    def passed(self) -> bool:
        """verify: every case passed (exit 0). bench: every row timed (exit 0)."""
        return self.returncode == 0

    def table(self) -> str:
        """One line per case: backend, fixture or configuration, dtype, status, and the
        worst rel_l2 per tensor, or the message."""
        lines = []
        for r in self.rows:
            what = r.get("fixture") or r.get("name") or ""
            worst = ", ".join(f"{t['name']} {t['rel_l2']:.2e}" for t in r.get("tensors", [])
                              if t.get("rel_l2") is not None)
            lines.append(f"{r.get('backend', '')} {what} {r.get('dtype', '')} "
                         f"{r.get('status', '')} {worst or r.get('message', '')}".strip())
        return "\n".join(lines) or self.output


def spec_of(kernel: Kernel) -> str:
    """MODULE:QUALNAME, or FILE.py:QUALNAME where the module cannot be imported by name."""
    if isinstance(kernel, str):
        return kernel
    module, name = getattr(kernel, "__module__", None), getattr(kernel, "__qualname__", None)
    if not name:
        raise TypeError(f"{kernel!r} has no __qualname__: pass 'module:function'")
    if module and module != "__main__":
        try:
            importlib.import_module(module)
            return f"{module}:{name}"
        except ImportError:
            pass
    return f"{os.path.abspath(inspect.getsourcefile(kernel))}:{name}"


def tool_path(tool: Optional[str]) -> str:
    found = tool or os.environ.get("GLABENCH") or shutil.which("glabench")
    if not found:
        raise FileNotFoundError("no glabench tool: put it on PATH, set GLABENCH, or pass tool=")
    return found


def run(command: str, kernel: Kernel, args: Sequence[str], name: Optional[str],
        tool: Optional[str], timeout: Optional[float], call_timeout: Optional[float]) -> Result:
    backend = name or "python." + (kernel.__name__ if callable(kernel) else
                                   kernel.rpartition(":")[2].split(".")[-1])
    env = dict(os.environ)
    paths = [p for p in sys.path if p]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("GLABENCH_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="glabench-") as tmp:
        out = os.path.join(tmp, "results.json")
        argv = [tool_path(tool), "--python", f"{backend}={spec_of(kernel)}"]
        if call_timeout is not None:
            argv += ["--call-timeout", str(call_timeout)]
        argv += [command, "--backend", backend, "--json", out, *args]
        done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
        document = {}
        if os.path.exists(out):
            with open(out) as f:
                document = json.load(f)
        return Result(done.returncode, document, done.stdout)


def verify(kernel: Kernel, *, fixtures: Iterable[str] = (), dtypes: Iterable[str] = (),
           ops: Iterable[str] = (), gradcheck: bool = True, name: Optional[str] = None,
           tool: Optional[str] = None, timeout: Optional[float] = None,
           call_timeout: Optional[float] = None, extra: Sequence[str] = ()) -> Result:
    """`glabench verify` of `kernel` on `fixtures` (default: the tool's committed ones) in
    `dtypes` (default: every dtype it declares)."""
    args = [a for f in fixtures for a in ("--fixture", f)]
    args += [a for d in dtypes for a in ("--dtype", d)]
    args += [a for o in ops for a in ("--op", o)]
    if not gradcheck:
        args.append("--no-gradcheck")
    return run("verify", kernel, args + list(extra), name, tool, timeout, call_timeout)


def bench(kernel: Kernel, *, args: Sequence[str] = (), name: Optional[str] = None,
          tool: Optional[str] = None, timeout: Optional[float] = None,
          call_timeout: Optional[float] = None) -> Result:
    """`glabench bench` of `kernel` with the bench's own options in `args`."""
    return run("bench", kernel, list(args), name, tool, timeout, call_timeout)
