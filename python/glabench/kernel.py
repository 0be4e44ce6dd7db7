"""What a Python kernel declares to glabench: its op, dtypes, modes, head sizes and device.

A kernel is a plain callable with the calling convention of its op (docs/python.md):

    gla:          fn(q, k, v, g, *, scale, initial_state, output_final_state) -> (o, ht)
    rwkv6:        fn(r, k, v, w, u, *, scale, initial_state, output_final_state) -> (o, ht)
    softmax_attn: fn(q, k, v, *, scale, causal) -> (o, lse)

Tensors are torch tensors in glabench's layout: tokens [B,T,H,K] and [B,T,H,V], states
[B,H,K,V], u [H,K], lse [B,H,T] (natural log, float32 when the storage dtype is 16-bit).
initial_state is None when the problem has no h0. A kernel declared varlen=True is also
given packed batches (B 1, N sequences, states [N,H,K,V]): those calls, and only those,
add the keyword cu_seqlens, an int32 tensor of the N+1 offsets, as fla's kernels take it. The declaration rides on the callable
as its `glabench` attribute, set by the decorator below; a callable without one is taken
as `kernel(op="gla")` with the defaults.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence

OPS = ("gla", "rwkv6", "softmax_attn")
DTYPES = ("float64", "float32", "bfloat16", "float16")
MODES = ("forward", "backward")
DEVICES = ("cuda", "cpu")


@dataclasses.dataclass(frozen=True)
class Declaration:
    ops: tuple = ("gla",)
    dtypes: tuple = ("float32", "bfloat16")
    modes: tuple = MODES
    # Head sizes (K, and V) the kernel takes; empty: any.
    head_sizes: tuple = ()
    device: str = "cuda"
    # Where the backward comes from: "autograd" (torch.autograd.grad through the
    # forward, with do and dht as cotangents) or a callable of the op's backward
    # convention (docs/python.md).
    backward: object = "autograd"
    # "float32": the kernel takes and gives its states (h0, ht, dht, dh0) in float32 when
    # the storage dtype is 16-bit (fla's rule; the bridge declares ABI 1.5's
    # GLABENCH_FEATURE_STATE_FP32, and glabench hands them over so). None: the storage dtype.
    state_dtype: Optional[str] = None
    version: str = ""
    # How the forward hands over its outputs: "return" (the pair, copied into glabench's
    # tensors) or "arguments" (glabench's o and ht, or lse, come as keyword arguments `o`
    # and `ht`/`lse`, the kernel writes them and returns None: no copy). "arguments" has
    # no autograd: such a kernel is forward-only or brings its own backward.
    outputs: str = "return"
    # Packed variable-length batches (ABI 1.5's GLABENCH_FEATURE_VARLEN): the kernel takes
    # the keyword cu_seqlens in those calls.
    varlen: bool = False

    def check(self) -> None:
        def within(name, values, allowed):
            bad = [x for x in values if x not in allowed]
            if bad or not values:
                raise ValueError(f"glabench.kernel: {name} {list(values)!r} must be a non-empty "
                                 f"subset of {list(allowed)!r}")
        within("ops", self.ops, OPS)
        within("dtypes", self.dtypes, DTYPES)
        within("modes", self.modes, MODES)
        if self.device not in DEVICES:
            raise ValueError(f"glabench.kernel: device {self.device!r} is not one of {DEVICES}")
        if not (self.backward == "autograd" or callable(self.backward)):
            raise ValueError("glabench.kernel: backward must be 'autograd' or a callable")
        if self.state_dtype not in (None, "float32"):
            raise ValueError(f"glabench.kernel: state_dtype {self.state_dtype!r} is not None "
                             "or 'float32'")
        if not isinstance(self.varlen, bool):
            raise ValueError("glabench.kernel: varlen must be True or False")
        if self.outputs not in ("return", "arguments"):
            raise ValueError(f"glabench.kernel: outputs {self.outputs!r} is not 'return' or "
                             "'arguments'")
        if self.outputs == "arguments" and "backward" in self.modes and \
                self.backward == "autograd":
            raise ValueError("glabench.kernel: outputs='arguments' has no autograd backward: "
                             "declare modes=('forward',) or give backward=")
        if any(not isinstance(h, int) or h <= 0 for h in self.head_sizes):
            raise ValueError("glabench.kernel: head_sizes must be positive integers")


def kernel(fn: Optional[Callable] = None, *, op: str | Sequence[str] = "gla",
           dtypes: Sequence[str] = ("float32", "bfloat16"), modes: Sequence[str] = MODES,
           head_sizes: Sequence[int] = (), device: str = "cuda", backward="autograd",
           state_dtype: Optional[str] = None, version: str = "", outputs: str = "return",
           varlen: bool = False):
    """Declares `fn` a glabench kernel; usable as @kernel or @kernel(op=..., ...)."""
    ops = (op,) if isinstance(op, str) else tuple(op)
    decl = Declaration(ops, tuple(dtypes), tuple(modes), tuple(head_sizes), device, backward,
                       state_dtype, version, outputs, varlen)
    decl.check()

    def mark(f):
        f.glabench = decl
        return f
    return mark(fn) if fn is not None else mark


def declaration_of(fn: Callable) -> Declaration:
    decl = getattr(fn, "glabench", None)
    if decl is None:
        return Declaration()
    if not isinstance(decl, Declaration):
        raise TypeError("the callable's `glabench` attribute is not a glabench.kernel "
                        "declaration")
    decl.check()
    return decl
