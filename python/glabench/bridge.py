"""The Python side of backends/python_bridge: one kernel, seen through glabench's ABI.

The bridge plugin (C++) embeds the interpreter, imports this module and calls
`load(name, spec)`, then the methods of the returned Bridge for each ABI call. Tensors
arrive as DLPack capsules of glabench's own memory (zero-copy; `tensor`), the stream as
a cudaStream_t (an int), the problem as a tuple (PROBLEM_FIELDS; num_seqs > 0 for a packed
batch, whose offsets come as one more tensor, cu_seqlens). Every method returns
None on success, or the message of the failure: the bridge records it against the case.
Nothing here raises into C.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback

import torch

from . import autotune_scope
from .kernel import declaration_of

PROBLEM_FIELDS = ("op", "B", "T", "H", "K", "V", "scale", "causal", "dtype", "has_h0",
                  "has_dht", "device", "num_seqs")


HERE = os.path.dirname(os.path.abspath(__file__))


def failure(e: BaseException) -> str:
    """'Type: message (at file:line in function)' of an exception, at its last frame in the
    kernel's code (not glabench's, nor importlib's); without a place when there is none."""
    text = f"{type(e).__name__}: {e}".strip()
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.startswith("<") and
              os.path.dirname(os.path.abspath(f.filename)) != HERE]
    if frames:
        f = frames[-1]
        text += f" (at {os.path.basename(f.filename)}:{f.lineno} in {f.name})"
    return text


def resolve(spec: str):
    """The callable `module.path:function` or `path/to/file.py:function` names."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise ValueError(f"'{spec}' is not MODULE:FUNCTION or FILE.py:FUNCTION")
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{where}: no such file")
        name = "glabench_kernel_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    target = module
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec} is not callable")
    return target


def load(name: str, spec: str):
    """(Bridge, None), or (None, why it cannot be loaded)."""
    try:
        return Bridge(name, spec), None
    except BaseException as e:  # noqa: BLE001 — everything becomes a message
        return None, failure(e)


class Problem:
    def __init__(self, p: tuple):
        for field, value in zip(PROBLEM_FIELDS, p):
            setattr(self, field, value)
        # What Triton's autotuning is kept per (autotune_scope.py): the sizes and dtype, not
        # the device index (Triton's own key names the GPU's architecture).
        self.shape = (self.op, self.B, self.T, self.H, self.K, self.V, self.dtype,
                      self.causal, self.num_seqs)


class Bridge:
    def __init__(self, name: str, spec: str):
        self.name, self.spec = name, spec
        autotune_scope.install()  # before the kernel's module makes its autotuners
        self.fn = resolve(spec)
        self.decl = declaration_of(self.fn)
        self.mode = "forward"
        self.saved = None  # the autograd graph of the last forward, for the backward
        self.stream_ptr = None
        self.pool = None
        self.problem_tuple, self.problem = None, None
        if self.decl.device == "cuda":
            # The harness owns the CUDA context; torch attaches to the same primary one.
            torch.cuda.init() if torch.cuda.is_available() else None

    # ---- description -------------------------------------------------------------
    def describe(self) -> str:
        caps = [[op, dtype, mode] for op in self.decl.ops for dtype in self.decl.dtypes
                for mode in self.decl.modes]
        version = f"{self.spec}; python {sys.version.split()[0]}; torch {torch.__version__}"
        if self.decl.head_sizes:
            version += "; head sizes " + ranges(sorted(set(self.decl.head_sizes)))
        if self.decl.version:
            version += "; " + self.decl.version
        if autotune_scope.installed():
            version += "; Triton autotuning kept per shape"
        return json.dumps({"device": self.decl.device, "capabilities": caps,
                           "version": version, "varlen": self.decl.varlen,
                           "state_fp32": self.decl.state_dtype == "float32"})

    def device_available(self):
        if self.decl.device == "cuda" and not torch.cuda.is_available():
            return (f"torch {torch.__version__} sees no CUDA device (built for CUDA "
                    f"{torch.version.cuda})")
        return None

    def supports(self, p: tuple, mode: str):
        try:
            pr = self._problem(p)
            if pr.op not in self.decl.ops:
                return f"the kernel declares ops {list(self.decl.ops)}, not {pr.op}"
            if pr.dtype not in self.decl.dtypes:
                return f"the kernel declares dtypes {list(self.decl.dtypes)}, not {pr.dtype}"
            if mode not in self.decl.modes:
                return f"the kernel declares modes {list(self.decl.modes)}, not {mode}"
            sizes = self.decl.head_sizes
            if sizes and (pr.K not in sizes or pr.V not in sizes):
                return f"the kernel declares head sizes {list(sizes)}, not K={pr.K} V={pr.V}"
            return None
        except BaseException as e:  # noqa: BLE001
            return failure(e)

    # ---- calls -------------------------------------------------------------------
    def tensor(self, capsule):
        """A torch tensor over glabench's memory (no copy)."""
        return torch.from_dlpack(capsule)

    def prepare(self, p: tuple, mode: str):
        try:
            self.mode = mode
            self.saved = None
            if self.decl.device == "cuda":
                torch.cuda.set_device(self._problem(p).device)
            return None
        except BaseException as e:  # noqa: BLE001
            return failure(e)

    def release(self):
        self.saved = None
        return None

    def _problem(self, p: tuple) -> Problem:
        """The problem of tuple `p`, its shape made Triton's autotuning scope (other bridges
        in the process may have moved it). The bridge hands over the same tuple object until
        the problem changes, so a timed call reuses the last one instead of building it."""
        if p is not self.problem_tuple:
            self.problem, self.problem_tuple = Problem(p), p
        autotune_scope.enter(self.problem.shape)
        return self.problem

    def _use_stream(self, stream: int):
        if self.decl.device != "cuda" or stream == self.stream_ptr:
            return
        torch.cuda.set_stream(torch.cuda.ExternalStream(stream))
        self.stream_ptr = stream

    def _capture_pool(self):
        """A private memory pool while the harness captures a CUDA graph, so that the
        graph's blocks are never handed to work outside it (as torch.cuda.graph does)."""
        if self.decl.device != "cuda" or not torch.cuda.is_current_stream_capturing():
            return None
        if not hasattr(torch.cuda, "use_mem_pool"):
            return None
        if self.pool is None:
            self.pool = torch.cuda.MemPool()
        return torch.cuda.use_mem_pool(self.pool)

    def _on_stream(self, stream, work, *args):
        """work(*args) with glabench's stream current, inside the capture pool while the
        harness captures a CUDA graph."""
        self._use_stream(stream)
        pool = self._capture_pool()
        if pool is None:
            return work(*args)
        with pool:
            return work(*args)

    def _run(self, pr: Problem, q, k, v, g, u, h0, cu_seqlens, out):
        """The kernel on these inputs: (o, second) with second ht (gla, rwkv6) or lse; with
        outputs="arguments", `out` (o and ht or lse) goes to the kernel as keywords, and a
        packed batch's cu_seqlens as one more. h0 comes in the state dtype glabench gives
        (float32 at 16-bit storage for state_dtype="float32")."""
        extra = dict(out) if self.decl.outputs == "arguments" else {}
        if pr.num_seqs > 0:
            extra["cu_seqlens"] = cu_seqlens
        if pr.op == "softmax_attn":
            return self.fn(q, k, v, scale=pr.scale, causal=bool(pr.causal), **extra)
        if pr.op == "rwkv6":
            return self.fn(q, k, v, g, u, scale=pr.scale, initial_state=h0,
                           output_final_state=True, **extra)
        return self.fn(q, k, v, g, scale=pr.scale, initial_state=h0, output_final_state=True,
                       **extra)

    def forward(self, p, q, k, v, g, u, h0, o, ht, lse, cu_seqlens, stream):
        try:
            pr = self._problem(p)
            return self._on_stream(stream, self._forward, pr, q, k, v, g, u, h0, cu_seqlens, o,
                                   ht, lse)
        except BaseException as e:  # noqa: BLE001
            self.saved = None
            return failure(e)

    def _forward(self, pr, q, k, v, g, u, h0, cu_seqlens, o, ht, lse):
        record = self.mode == "backward" and self.decl.backward == "autograd"
        ins = [q, k, v, g, u, h0]
        out = {"o": o, "lse": lse} if pr.op == "softmax_attn" else {"o": o, "ht": ht}
        if record:
            ins = [None if t is None else t.detach().requires_grad_() for t in ins]
            with torch.enable_grad():
                result = self._run(pr, *ins, cu_seqlens, out)
        else:
            with torch.no_grad():
                result = self._run(pr, *ins, cu_seqlens, out)
        if self.decl.outputs == "arguments":
            if result is not None:
                raise TypeError("a kernel declared outputs='arguments' writes o and returns "
                                f"None, not {type(result).__name__}")
            return None
        got_o, second = unpack(result, "ht" if pr.op != "softmax_attn" else "lse")
        with torch.no_grad():
            put("forward", "o", o, got_o, exact_dtype=True)
            if pr.op == "softmax_attn":
                put("forward", "lse", lse, second, exact_dtype=False)
            elif ht is not None:
                put("forward", "ht", ht, second, exact_dtype=False)
        self.saved = (ins, got_o, second) if record else None
        return None

    def backward(self, p, q, k, v, g, u, h0, o, lse, do, dht, dq, dk, dv, dg, du, dh0,
                 cu_seqlens, stream):
        try:
            pr = self._problem(p)
            return self._on_stream(stream, self._backward, pr, q, k, v, g, u, h0, o, lse, do,
                                   dht, dq, dk, dv, dg, du, dh0, cu_seqlens)
        except BaseException as e:  # noqa: BLE001
            return failure(e)
        finally:
            self.saved = None

    def _backward(self, pr, q, k, v, g, u, h0, o, lse, do, dht, dq, dk, dv, dg, du, dh0,
                  cu_seqlens):
        targets = {"dq": dq, "dk": dk, "dv": dv, "dg": dg, "du": du, "dh0": dh0}
        if callable(self.decl.backward):
            packed = {"cu_seqlens": cu_seqlens} if pr.num_seqs > 0 else {}
            grads = self.decl.backward(q, k, v, g, u, h0, o, lse, do, dht, scale=pr.scale,
                                       causal=bool(pr.causal), **packed)
            if not isinstance(grads, dict):
                raise TypeError("the kernel's backward returned "
                                f"{type(grads).__name__}, not a dict of gradients")
        else:
            if self.saved is None:  # no forward of ours before: recompute it
                mode, self.mode = self.mode, "backward"
                try:
                    self._forward(pr, q, k, v, g, u, h0, cu_seqlens, None, None, None)
                finally:
                    self.mode = mode
            ins, got_o, second = self.saved
            outs, cots = [got_o], [do]
            if pr.op != "softmax_attn" and dht is not None and second is not None:
                outs.append(second)
                cots.append(dht.to(second.dtype))
            names = ["dq", "dk", "dv", "dg", "du", "dh0"]
            leaves = [(n, t) for n, t in zip(names, ins) if t is not None]
            got = torch.autograd.grad(outs, [t for _, t in leaves], cots, allow_unused=True)
            grads = {n: gr for (n, _), gr in zip(leaves, got)}
        with torch.no_grad():
            for name, dst in targets.items():
                if dst is None:
                    continue
                src = grads.get(name)
                if src is None:
                    dst.zero_()
                else:
                    put("backward", name, dst, src, exact_dtype=False)
        return None


def ranges(values):
    """'1-64, 128' for [1, 2, ..., 64, 128]."""
    parts, start = [], None
    for i, x in enumerate(values):
        if start is None:
            start = x
        if i + 1 == len(values) or values[i + 1] != x + 1:
            parts.append(str(start) if start == x else f"{start}-{x}")
            start = None
    return ", ".join(parts)


def unpack(result, second_name):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(f"the kernel returned {type(result).__name__}, not the pair "
                        f"(o, {second_name})")
    return result[0], result[1]


def put(call, name, dst, src, exact_dtype):
    """Writes the kernel's `src` into glabench's `dst`, after checking what it is."""
    if dst is None:
        return
    if not isinstance(src, torch.Tensor):
        raise TypeError(f"{call} returned {name} as {type(src).__name__}, not a tensor")
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"{call} returned {name} of shape {tuple(src.shape)}, expected "
                         f"{tuple(dst.shape)}")
    if exact_dtype and src.dtype != dst.dtype:
        raise TypeError(f"{call} returned {name} in {src.dtype}, expected {dst.dtype}")
    if not src.is_floating_point():
        raise TypeError(f"{call} returned {name} in {src.dtype}, not a floating-point dtype")
    if src.device != dst.device:
        raise ValueError(f"{call} returned {name} on {src.device}, expected {dst.device}")
    if src.data_ptr() != dst.data_ptr():
        dst.copy_(src)
