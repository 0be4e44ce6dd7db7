"""What every peer script shares: `glabench bench`'s inputs, timing policy, essential
cost, thresholds and row names, and the results file it writes (glabench's bench results
schema, rows marked "peer": true). fla_peers.py and sdpa_peers.py import it; the README
beside it says what the policy is and where glabench applies the same
(harness/src/bench_device.cpp, stopping_criterion.cpp, op_cost.cpp, llc_flush.hpp,
peak_rates.cpp, gate_regime.hpp).

Places: "cuda" (CUDA events on the current stream, an L2-sized memset before each sample)
or "cpu" (time.perf_counter around the call, as glabench times its host backends, after
writing twice the last-level cache, at most 128 MiB); rows say ran_on "cuda" or "host".

Gate regimes (--gates, gla's g and rwkv6's w, drawn per element in fp64 from standard
normals x): model log σ(x)/16; mild log σ(x + 2); fla log σ(x); strong −exp(x − 0.5);
cliff mild, then −30 at every feature of the tokens t with t % 53 = 17, then exactly 0 at
every token of the features k with k % 8 = 3 (the zeros win).

Timings (--timing): eager times the Python call as it comes, host launches included;
graph captures the call once in a CUDA graph and times its replays: device time.
"""
import dataclasses
import datetime
import json
import math
import os
import time

import torch

# glabench's default rel_l2 thresholds (README, "Verification policy").
THRESHOLD = {"fp32": 1e-5, "fp16": 5e-3, "bf16": 1e-2}
DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}

WARMUP = 3
NOISE_TARGET, MIN_REPS, MAX_REPS, MIN_SAMPLES_AT_CAP = 0.005, 10, 500, 5
# glabench bench's --time-cap (default 1 s); GLABENCH_PEER_TIME_CAP sets it for a run
# whose bench used another, so that both stop sampling alike.
TIME_CAP_S = float(os.environ.get("GLABENCH_PEER_TIME_CAP", "1.0"))

GATE_REGIMES = ("model", "mild", "fla", "strong", "cliff")  # what --gates all runs, in order
DEFAULT_GATES = "mild"
CLIFF_TOKENS = slice(17, None, 53)   # t % 53 == 17: g = CLIFF_GATE at every feature
CLIFF_GATE = -30.0
CLIFF_FEATURES = slice(3, None, 8)   # k % 8 == 3: g = 0 at every token
TIMINGS = ("eager", "graph")


def gates(regime, x):
    """The gates [B,T,H,K] of `regime` (module docstring) from x, fp64 standard normals of
    that shape."""
    logsigmoid = torch.nn.functional.logsigmoid
    if regime == "model":
        return logsigmoid(x) / 16
    if regime == "fla":
        return logsigmoid(x)
    if regime == "strong":
        return -torch.exp(x - 0.5)
    if regime not in ("mild", "cliff"):
        raise ValueError(f"unknown gate regime '{regime}' (one of {', '.join(GATE_REGIMES)})")
    g = logsigmoid(x + 2.0)
    if regime == "cliff":
        g[:, CLIFF_TOKENS] = CLIFF_GATE
        g[..., CLIFF_FEATURES] = 0.0
    return g


def names_option(ap, values, flag, what, known, default, everything=False):
    """The names an option (action="append") gave, in order and once each: each value
    split at commas; with `everything`, "all" stands for all of `known`. An unknown name
    is an argparse error naming it as a `what`."""
    names = []
    for value in values or [default]:
        for name in value.split(","):
            if everything and name == "all":
                names.extend(known)
            elif name in known:
                names.append(name)
            else:
                ap.error(f"{flag}: unknown {what} '{name}' (one of "
                         f"{', '.join(known + (('all',) if everything else ()))})")
    return list(dict.fromkeys(names))


def add_timing_option(ap):
    """--timing, as glabench bench takes it (read with names_option against TIMINGS)."""
    ap.add_argument("--timing", action="append",
                    help="eager (the call as it comes) and/or graph (replays of a CUDA graph), "
                         "repeated or comma-separated (default: eager)")


def host_cpu():
    """The model name in /proc/cpuinfo, as glabench's device_info.cpp reads it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


class Place:
    """Where peers run and how a sample is taken there."""

    def __init__(self, device="cuda"):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            if not torch.cuda.is_available():
                raise SystemExit(f"no CUDA device for --device {device} here (torch "
                                 f"{torch.__version__}); --device cpu times on the host")
            props = torch.cuda.get_device_properties(self.device)
            flush_bytes = max(getattr(props, "L2_cache_size", 1 << 20), 1 << 20)
            self._events = (torch.cuda.Event(enable_timing=True),
                            torch.cuda.Event(enable_timing=True))
        elif self.device.type == "cpu":
            try:
                llc = os.sysconf("SC_LEVEL3_CACHE_SIZE")
            except (ValueError, OSError):
                llc = 0
            flush_bytes = min(2 * (llc if llc > 0 else 32 << 20), 128 << 20)
        else:
            raise SystemExit(f"unsupported --device '{device}' (cuda or cpu)")
        self.flush_buffer = torch.empty(flush_bytes, dtype=torch.uint8, device=self.device)

    @property
    def ran_on(self):
        return "cuda" if self.cuda else "host"

    def synchronize(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def empty_cache(self):
        """Gives the caching allocator's free blocks back (CUDA) between configurations."""
        if self.cuda:
            torch.cuda.empty_cache()

    def flush(self, fill):
        self.flush_buffer.fill_(fill)

    def sample_ms(self, call):
        """(one call's time in ms, between two CUDA events or by the host's clock, and
        what the call returned)."""
        if self.cuda:
            start, end = self._events
            start.record()
            result = call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end), result
        began = time.perf_counter()
        result = call()
        return (time.perf_counter() - began) * 1e3, result

    def generator(self, seed):
        return torch.Generator(device=self.device).manual_seed(seed)


def normals(place, seed):
    """n(*shape, std=1.0): fp64 normals from one generator seeded with `seed`."""
    gen = place.generator(seed)
    return lambda *shape, std=1.0: torch.randn(*shape, generator=gen, device=place.device,
                                               dtype=torch.float64) * std


def essential_cost(op, B, T, H, K, V, dtype_bytes, backward, causal=True):
    """Bytes and flops as glabench's op_cost.cpp counts them (gla and rwkv6 with h0 given)."""
    BTH = B * T * H
    qk, v, state = BTH * K, BTH * V, B * H * K * V
    if op == "softmax_attn":
        lse = BTH
        fwd_in, fwd_out = 2 * qk + v, v + lse
        bwd_in, bwd_out = 2 * qk + 2 * v + v + lse, 2 * qk + v
        flops = (0.5 if causal else 1.0) * 4.0 * B * H * T * T * K * (3.5 if backward else 1.0)
    else:
        fwd_in, fwd_out = 2 * qk + v + qk + state, v + state
        bwd_in, bwd_out = 2 * qk + 2 * v + qk + state + state, 2 * qk + v + qk + state
        if op == "rwkv6":
            fwd_in += H * K
            bwd_in += H * K
            bwd_out += H * K
        flops = BTH * K * V * (14.0 if backward else 5.0)
    elements = fwd_in + fwd_out + (bwd_in + bwd_out if backward else 0)
    return elements * dtype_bytes, flops


@dataclasses.dataclass(frozen=True)
class Config:
    """A row's configuration, glabench's key: `causal` is softmax_attn's mask (bench
    --mask; gla and rwkv6 are causal), `gates` the regime of an op with gates (None for
    softmax_attn), `timing` eager or graph."""
    backend: str
    op: str
    dtype: str
    mode: str
    shape: tuple  # B, T, H, K, V
    causal: bool = True
    gates: str | None = None
    timing: str = "eager"

    @property
    def backward(self):
        return self.mode == "fwdbwd"

    def name(self):
        """As bench_config::name() has it:
        backend/op/dtype/mode/B4_T1024_H4_K100_V100[/full][/gates-<regime>][/graph]."""
        B, T, H, K, V = self.shape
        name = f"{self.backend}/{self.op}/{self.dtype}/{self.mode}/B{B}_T{T}_H{H}_K{K}_V{V}"
        if not self.causal:
            name += "/full"
        if self.gates:
            name += "/gates-" + self.gates
        if self.timing != "eager":
            name += "/" + self.timing
        return name

    def cost(self):
        return essential_cost(self.op, *self.shape, BYTES[self.dtype], self.backward,
                              self.causal)


def summarize(samples):
    """Median, p20, p80 (linear interpolation), mean, min, max, stddev, cv: statistics.cpp."""
    xs = sorted(samples)

    def q(p):
        pos = p * (len(xs) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (pos - lo) * (xs[hi] - xs[lo])

    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((s - mean) ** 2 for s in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return {"median_ms": q(0.5), "p20_ms": q(0.2), "p80_ms": q(0.8), "mean_ms": mean,
            "min_ms": xs[0], "max_ms": xs[-1], "stddev_ms": sd, "cv": sd / mean if mean else 0.0}


def measure_peaks(place):
    """context.peaks with the copy bandwidth measured as glabench's peak_rates.cpp does:
    on CUDA a device-to-device copy of 1 GiB, median of 10 after one untimed; on the host
    a copy of 256 MiB, median of 6; read+write bytes."""
    if place.cuda:
        nbytes, reps, skip = 1 << 30, 11, 1
        notes = ("copy: torch device-to-device copy of 1 GiB, median of 10, read+write bytes; "
                 "no GEMM peak measured")
    else:
        nbytes, reps, skip = 256 << 20, 6, 0
        notes = ("host: torch copy of 256 MiB (torch's threads), median of 6, read+write "
                 "bytes; no GEMM peak on the host")
    src = torch.empty(nbytes, dtype=torch.uint8, device=place.device)
    dst = torch.empty_like(src)
    src.fill_(1)
    times = sorted([place.sample_ms(lambda: dst.copy_(src))[0] for _ in range(reps)][skip:])
    del src, dst
    gbps = 2 * nbytes / (times[len(times) // 2] * 1e-3) / 1e9  # the upper median
    return {place.ran_on: {"copy_gbps": gbps, "gemm_tflops": {}, "notes": notes}}


class CaptureError(Exception):
    """The call cannot be captured in a CUDA graph."""


@dataclasses.dataclass
class Timed:
    """What timing a call gave: its samples in ms, whether the noise target was met, o of
    the last timed call, and (graph, fwdbwd) the gradients of the last replay."""
    samples: list
    met: bool
    o: torch.Tensor
    grads: tuple = ()


def warm_up(call):
    """One untimed call (Triton compiles and autotunes there), then 3 warm-up calls."""
    call()
    for _ in range(WARMUP):
        call()


def sample(place, call):
    """(samples in ms, noise target met, what the last call returned) under the bench's
    stopping rule: per sample a cache flush and the timed call; stop at cv ≤ 0.5 % with
    ≥ 10 samples, else at 500 samples, else after TIME_CAP_S (1 s unless
    GLABENCH_PEER_TIME_CAP says otherwise) with ≥ 5."""
    place.synchronize()
    samples, began, fill = [], time.perf_counter(), 0
    while True:
        fill = (fill + 1) % 256
        place.flush(fill)
        ms, result = place.sample_ms(call)
        samples.append(ms)
        n, elapsed = len(samples), time.perf_counter() - began
        cv = summarize(samples)["cv"] if n >= 2 else float("inf")
        if n >= MIN_REPS and cv <= NOISE_TARGET:
            return samples, True, result
        if n >= MAX_REPS or (elapsed >= TIME_CAP_S and n >= MIN_SAMPLES_AT_CAP):
            return samples, False, result


def time_eager(place, forward, cotangents=None):
    """Timed: the call as it comes. forward() -> the call's outputs, o first; with
    `cotangents` (fwdbwd) the call is the forward and autograd's backward of the outputs
    with them (gradients accumulate into .grad, as in training)."""
    if cotangents is None:
        def call():
            with torch.no_grad():
                return forward()[0]
    else:
        def call():
            outputs = forward()
            torch.autograd.backward(outputs, cotangents)
            return outputs[0].detach()
    warm_up(call)
    return Timed(*sample(place, call))


def time_graph(place, forward, leaves=(), cotangents=None):
    """Timed: the call captured once in a CUDA graph, each sample a replay. The untimed
    call and the warm-ups run on the capture's side stream, so Triton has autotuned
    before the capture; fwdbwd captures the forward and torch.autograd.grad of its
    outputs with `cotangents` for `leaves`, whose gradients are the graph's own outputs.
    The graph's o and gradients are filled with NaN after the capture, so only replays
    can have written what the check reads. Raises CaptureError."""
    def step():
        if cotangents is None:
            with torch.no_grad():
                return forward()[0], ()
        outputs = forward()
        return outputs[0], torch.autograd.grad(outputs, leaves, cotangents)

    main = torch.cuda.current_stream(place.device)
    side = torch.cuda.Stream(place.device)
    side.wait_stream(main)
    with torch.cuda.stream(side):
        warm_up(step)
    main.wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        # The outer stream context restores the current stream even where the capture's
        # end raises before torch.cuda.graph restores it.
        with torch.cuda.stream(side), torch.cuda.graph(graph, stream=side):
            o, grads = step()
    except Exception as e:  # whatever the call raises while captured: the row is skipped
        first = e  # the error that broke the capture, not what ending it then raised
        while first.__context__ is not None:
            first = first.__context__
        raise CaptureError(f"{type(first).__name__}: {first_line(first)}") from e
    with torch.no_grad():
        for t in (o, *grads):
            t.fill_(float("nan"))
    samples, met, _ = sample(place, graph.replay)
    return Timed(samples, met, o, grads)


def timed_outputs(timed, verified_o, dtype_name):
    """(the row's timed-output keys, as glabench's bench_runner.cpp writes them, and why
    the row fails or ""): o of the last timed call against the o the quick verify saw on
    the same inputs — equal bit for bit, or else finite and within the dtype's rel_l2
    threshold (timed_outputs_rel_l2: 0 when equal, null when not finite); and every
    gradient of a graph's replay written (not all still NaN, as filled after the
    capture)."""
    with torch.no_grad():
        bitwise = torch.equal(timed.o, verified_o)
        err = 0.0 if bitwise else rel_l2(timed.o, verified_o.double())
        unwritten = sum(1 for g in timed.grads if torch.isnan(g).all().item())
    finite = math.isfinite(err)
    keys = {"timed_outputs_identical": bitwise, "timed_outputs_rel_l2": err if finite else None}
    if not bitwise and not (finite and err <= THRESHOLD[dtype_name]):
        return keys, (f"the timed call's output differs from the verified call's: "
                       f"o rel_l2 {err:.3g} (glabench's {dtype_name} threshold "
                       f"{THRESHOLD[dtype_name]:g})")
    if unwritten:
        return keys, (f"the CUDA graph's replays left {unwritten} of {len(timed.grads)} "
                       f"gradients unwritten (NaN as filled after the capture)")
    return keys, ""


def first_line(error):
    """An exception's message, its first line."""
    return (str(error).strip().splitlines() or [""])[0]


def rel_l2(got, ref):
    """‖got − ref‖₂ / ‖ref‖₂ in fp64."""
    return (torch.linalg.vector_norm(got.double() - ref) / torch.linalg.vector_norm(ref)).item()


def check(tensor, err, dtype_name, max_abs=None):
    """One entry of a row's checks, at glabench's threshold for the dtype."""
    return {"tensor": tensor, "rel_l2": err, "max_abs": max_abs,
            "threshold": THRESHOLD[dtype_name], "passed": err <= THRESHOLD[dtype_name]}


def results_context(place, seed, verify_tokens, versions, options=None):
    """The context of a peer results file; `versions` (e.g. fla_version, torch_version)
    follow the date, `options` extend bench_options."""
    context = {"glabench_results": "bench", "schema_version": 1, "peers": True}
    if place.cuda:
        props = torch.cuda.get_device_properties(place.device)
        context.update({"device": torch.cuda.get_device_name(place.device),
                        "sm_count": props.multi_processor_count})
    else:  # as glabench names a host-only run, so that compare pairs the two
        cpu = host_cpu()
        context.update({"device": "cpu: " + (cpu or "?"), "host_cpu": cpu,
                        "host_cpus": os.cpu_count(), "torch_threads": torch.get_num_threads()})
    context["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    context.update(versions)
    if place.cuda:
        context["cuda_runtime_version"] = torch.version.cuda
    context.update({"backend_environment": {},
                    "bench_options": {"hot": False, "warmup": WARMUP, "min_reps": MIN_REPS,
                                      "max_reps": MAX_REPS, "noise_target": NOISE_TARGET,
                                      "time_cap_s": TIME_CAP_S, "seed": seed,
                                      "verify_tokens": verify_tokens, **(options or {})}})
    return context


class ResultsFile:
    """A peer results file, rewritten by one rename after every row: a run cut short
    keeps what it timed."""

    def __init__(self, path, context, peaks):
        self.path, self.context, self.rows = path, context, []
        self.context["peaks"] = peaks
        self.copy_gbps = next(iter(peaks.values()))["copy_gbps"]

    def write(self):
        with open(self.path + ".tmp", "w") as f:
            json.dump({"context": self.context, "benchmarks": self.rows}, f, indent=1)
        os.replace(self.path + ".tmp", self.path)

    def _add(self, row, extra):
        row.update(extra or {})
        self.rows.append(row)
        self.write()
        return row

    @staticmethod
    def _config(config, status, ran_on, samples):
        """The configuration's fields as glabench writes them ("gates" only for an op
        with gates)."""
        B, T, H, K, V = config.shape
        name = config.name()
        row = {"name": name, "run_name": name, "run_type": "iteration",
               "backend": config.backend, "peer": True, "op": config.op,
               "dtype": config.dtype, "mode": config.mode, "B": B, "T": T, "H": H, "K": K,
               "V": V, "hot": False, "causal": config.causal, "timing": config.timing}
        if config.gates:
            row["gates"] = config.gates
        row.update({"status": status, "ran_on": ran_on, "samples_ms": samples,
                    "iterations": len(samples), "repetitions": len(samples),
                    "repetition_index": 0, "threads": 1, "time_unit": "ms"})
        return row

    def add_timed(self, config, timed, ran_on, checks, outputs, extra=None):
        """Appends a timed row (status ok) and writes the file; returns the row. A check
        of the quick verify over its threshold keeps the row ok, its message saying so."""
        stats = summarize(timed.samples)
        nbytes, flops = config.cost()
        row = self._config(config, "ok", ran_on, timed.samples)
        row.update({"real_time": stats["median_ms"], "cpu_time": stats["median_ms"],
                    "noise_target_met": timed.met, "bytes": nbytes, "flops": flops,
                    "gbps": nbytes / stats["median_ms"] / 1e6,
                    "tflops": flops / stats["median_ms"] / 1e9,
                    "bandwidth_fraction": nbytes / stats["median_ms"] / 1e6 / self.copy_gbps,
                    "flop_fraction": None,
                    "message": "; ".join(f"{c['tensor']} rel_l2 {c['rel_l2']:.3g} over "
                                         f"glabench's {config.dtype} threshold"
                                         for c in checks if not c["passed"]),
                    "checks": checks})
        row.update(outputs)
        row.update(stats)
        return self._add(row, extra)

    def add_failed(self, config, ran_on, reason, checks, outputs, extra=None):
        """Appends a row whose timed calls failed their check (status failed, with the
        reason, the quick verify's checks and the timed-output keys): no time, as glabench
        keeps samples for ok rows alone."""
        return self._untimed(config, "failed", ran_on, reason, checks, outputs, extra)

    def add_skipped(self, config, ran_on, reason, extra=None):
        """Appends a row that could not be timed here (status skipped, with the reason)."""
        return self._untimed(config, "skipped", ran_on, reason, [], {}, extra)

    def _untimed(self, config, status, ran_on, reason, checks, outputs, extra):
        nbytes, flops = config.cost()
        row = self._config(config, status, ran_on, [])
        row.update({"real_time": 0, "cpu_time": 0, "noise_target_met": False,
                    "bytes": nbytes, "flops": flops, "gbps": None, "tflops": None,
                    "bandwidth_fraction": None, "flop_fraction": None, "message": reason,
                    "error_occurred": True, "error_message": reason, "checks": checks})
        row.update(outputs)
        return self._add(row, extra)

    def add_measured(self, place, config, forward, verified_o, checks, leaves=(),
                     cotangents=None, extra=None):
        """Times config's call under config.timing (time_eager, time_graph), checks its
        timed outputs against `verified_o`, and appends the row; returns it. Graph timing
        on the CPU, or a call that cannot be captured, gives a skipped row; timed outputs
        that fail their check a failed row."""
        if config.timing == "graph" and not place.cuda:
            return self.add_skipped(config, place.ran_on, "graph timing needs CUDA (a CUDA "
                                    "graph); this run is on the CPU", extra)
        if config.timing == "graph":
            try:
                timed = time_graph(place, forward, leaves, cotangents)
            except CaptureError as e:
                return self.add_skipped(config, place.ran_on,
                                        f"cannot be captured in a CUDA graph: {e}", extra)
        else:
            timed = time_eager(place, forward, cotangents)
        outputs, failure = timed_outputs(timed, verified_o, config.dtype)
        if failure:
            return self.add_failed(config, place.ran_on, failure, checks, outputs, extra)
        return self.add_timed(config, timed, place.ran_on, checks, outputs, extra)


def describe(row, note=""):
    """A row as one line of progress: its name, then its median, cv, samples, `note` and
    checks, or its status and message."""
    if row["status"] != "ok":
        return f"{row['name']:72s} {row['status']}: {row['message']}"
    checks = "  ".join(f"{c['tensor']} rel_l2 {c['rel_l2']:.2e}" for c in row["checks"])
    return (f"{row['name']:72s} {row['median_ms']:9.4f} ms  cv {row['cv']:.4f}  "
            f"n {len(row['samples_ms']):3d}  {note}{checks}")
