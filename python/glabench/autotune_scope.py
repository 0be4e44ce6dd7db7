"""Triton's autotuning kept per problem shape, so that a peer is timed at its own best.

Triton's autotuner keys a kernel's chosen configuration on the arguments named in its
`key` only. fla's chunk kernels name tile sizes, K and V, not B, T or H, so in one process
the first shape a kernel meets chooses its configuration for every later shape, and
Triton's on-disk autotuning cache (TRITON_CACHE_AUTOTUNING=1) carries that choice to the
next process and machine. A bench of several shapes, or one that restores a cache filled
at another shape, then times fla with tiles tuned for a different problem: on an H200,
chunk_gla at B4 T2048 H16 D128 bf16 took 0.498 ms forward with the configuration chosen at
B2 T1024 H4, and 0.37–0.39 ms in every run that tuned it at that shape.

With the scope on (GLABENCH_AUTOTUNE_SCOPE=shape, the default), every Triton autotuner in
the process keeps its choices per shape: the bridge calls `enter(shape)` when its problem
changes, each autotuner's in-memory cache holds one table per shape, and the on-disk
cache's key names the shape too, so a carried cache restores the choice made at that very
shape. A kernel autotunes once per shape (and dtype, as before), as it would in a process
that only ever ran that shape, which is how its users run it. GLABENCH_AUTOTUNE_SCOPE=kernel
keeps Triton's own keys."""
from __future__ import annotations

import gc
import os
import sys
import warnings

_MODES = ("shape", "kernel")
_shape = None  # the problem shape the bridge runs now; None before the first
_installed = False


def mode() -> str:
    value = os.environ.get("GLABENCH_AUTOTUNE_SCOPE", "shape")
    if value not in _MODES:
        raise ValueError(f"GLABENCH_AUTOTUNE_SCOPE={value!r}: expected one of {list(_MODES)}")
    return value


def installed() -> bool:
    return _installed


def enter(shape) -> None:
    """From now on, autotuning choices are those made at `shape` (a hashable tuple)."""
    global _shape
    _shape = shape


class ScopedCache(dict):
    """An autotuner's cache (tuning key → Config), one table per shape: every lookup and
    store goes to the current shape's. Iteration and len see all shapes' entries."""

    @staticmethod
    def _at(key):
        return (_shape, key)

    def __contains__(self, key):
        return dict.__contains__(self, self._at(key))

    def __getitem__(self, key):
        return dict.__getitem__(self, self._at(key))

    def __setitem__(self, key, value):
        dict.__setitem__(self, self._at(key), value)

    def __delitem__(self, key):
        dict.__delitem__(self, self._at(key))

    def get(self, key, default=None):
        return dict.get(self, self._at(key), default)

    def pop(self, key, *default):
        return dict.pop(self, self._at(key), *default)

    def setdefault(self, key, default=None):
        return dict.setdefault(self, self._at(key), default)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __reduce__(self):  # copy and pickle keep the (shape, key) pairs as they are
        return (_restore, (list(dict.items(self)),))


def _restore(items):
    cache = ScopedCache()
    dict.update(cache, items)
    return cache


class ShapedKey(tuple):
    """A tuning key that equals and hashes as the plain key, so the autotuner's own tables
    see no difference, while its text (what Triton's on-disk cache hashes) names the shape."""

    def __str__(self):
        return repr((tuple(self), _shape))

    __repr__ = __str__


def install() -> bool:
    """Scopes every Triton autotuner, those made before this call too, where Triton is
    importable and the mode is "shape". True when installed (or already)."""
    if mode() != "shape":
        return False
    made_before = "triton.runtime.autotuner" in sys.modules
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return False
    global _installed
    if _installed:
        return True
    init = Autotuner.__init__
    # Triton before 3.4 has no on-disk autotuning cache: only the in-memory one to scope.
    check_disk_cache = getattr(Autotuner, "check_disk_cache", None)

    def scoped_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.cache = ScopedCache()

    def shaped_check_disk_cache(self, tuning_key, configs, bench_fn):
        return check_disk_cache(self, ShapedKey(tuning_key), configs, bench_fn)

    Autotuner.__init__ = scoped_init
    if check_disk_cache is not None:
        Autotuner.check_disk_cache = shaped_check_disk_cache
    _installed = True
    if made_before:  # autotuners made before: their choices, at no known shape, are dropped
        with warnings.catch_warnings():  # isinstance on torch's deprecated aliases warns
            warnings.simplefilter("ignore")
            for obj in gc.get_objects():
                if isinstance(obj, Autotuner) and not isinstance(obj.cache, ScopedCache):
                    obj.cache = ScopedCache()
    return True
