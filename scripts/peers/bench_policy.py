"""What every peer script shares: `glabench bench`'s timing policy, its essential cost and
thresholds, and the results file it writes (glabench's bench results schema, rows marked
"peer": true). fla_peers.py and sdpa_peers.py import it; the README beside it says what
the policy is and where glabench applies the same (harness/src/bench_device.cpp,
stopping_criterion.cpp, op_cost.cpp, llc_flush.hpp, peak_rates.cpp).

Places: "cuda" (CUDA events on the current stream, an L2-sized memset before each sample)
or "cpu" (time.perf_counter around the call, as glabench times its host backends, after
writing twice the last-level cache, at most 128 MiB); rows say ran_on "cuda" or "host".
"""
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
NOISE_TARGET, MIN_REPS, MAX_REPS, TIME_CAP_S, MIN_SAMPLES_AT_CAP = 0.005, 10, 500, 1.0, 5


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

    def flush(self, fill):
        self.flush_buffer.fill_(fill)

    def sample_ms(self, call):
        """One call's time in ms: between two CUDA events, or by the host's clock."""
        if self.cuda:
            start, end = self._events
            start.record()
            call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        began = time.perf_counter()
        call()
        return (time.perf_counter() - began) * 1e3

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
    times = sorted([place.sample_ms(lambda: dst.copy_(src)) for _ in range(reps)][skip:])
    del src, dst
    gbps = 2 * nbytes / (times[len(times) // 2] * 1e-3) / 1e9  # the upper median
    return {place.ran_on: {"copy_gbps": gbps, "gemm_tflops": {}, "notes": notes}}


def time_call(call, place):
    """Samples in ms under the bench's stopping rule; (samples, noise target met).

    One untimed call (Triton compiles and autotunes there), 3 warm-up calls, then per
    sample a cache flush and the timed call; stop at cv ≤ 0.5 % with ≥ 10 samples, else
    at 500 samples, else after 1 s with ≥ 5."""
    call()
    for _ in range(WARMUP):
        call()
    place.synchronize()
    samples, began, fill = [], time.perf_counter(), 0
    while True:
        fill = (fill + 1) % 256
        place.flush(fill)
        samples.append(place.sample_ms(call))
        n, elapsed = len(samples), time.perf_counter() - began
        cv = summarize(samples)["cv"] if n >= 2 else float("inf")
        if n >= MIN_REPS and cv <= NOISE_TARGET:
            return samples, True
        if n >= MAX_REPS or (elapsed >= TIME_CAP_S and n >= MIN_SAMPLES_AT_CAP):
            return samples, False


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
    def _config(backend, op, dtype_name, mode, shape, status, ran_on, samples, causal):
        """The configuration's fields as glabench writes them: "causal" is softmax_attn's
        mask (bench --mask; gla and rwkv6 are causal), and a full-mask row's name ends in
        /full, as bench_config::name() has it."""
        B, T, H, K, V = shape
        name = f"{backend}/{op}/{dtype_name}/{mode}/B{B}_T{T}_H{H}_K{K}_V{V}"
        if not causal:
            name += "/full"
        return {"name": name, "run_name": name, "run_type": "iteration",
                "backend": backend, "peer": True, "op": op, "dtype": dtype_name,
                "mode": mode, "B": B, "T": T, "H": H, "K": K, "V": V, "hot": False,
                "causal": causal, "status": status, "ran_on": ran_on, "samples_ms": samples,
                "iterations": len(samples), "repetitions": len(samples),
                "repetition_index": 0, "threads": 1, "time_unit": "ms"}

    def add_timed(self, backend, op, dtype_name, mode, shape, samples, met, cost, ran_on,
                  checks, extra=None, causal=True):
        """Appends a timed row (status ok) and writes the file; returns the row."""
        stats = summarize(samples)
        nbytes, flops = cost
        failed = [c for c in checks if not c["passed"]]
        row = self._config(backend, op, dtype_name, mode, shape, "ok", ran_on, samples, causal)
        row.update({"real_time": stats["median_ms"], "cpu_time": stats["median_ms"],
                    "noise_target_met": met, "bytes": nbytes, "flops": flops,
                    "gbps": nbytes / stats["median_ms"] / 1e6,
                    "tflops": flops / stats["median_ms"] / 1e9,
                    "bandwidth_fraction": nbytes / stats["median_ms"] / 1e6 / self.copy_gbps,
                    "flop_fraction": None,
                    "message": "; ".join(f"{c['tensor']} rel_l2 {c['rel_l2']:.3g} over "
                                         f"glabench's {dtype_name} threshold" for c in failed),
                    "checks": checks})
        row.update(stats)
        return self._add(row, extra)

    def add_skipped(self, backend, op, dtype_name, mode, shape, cost, ran_on, reason,
                    extra=None, causal=True):
        """Appends a row that could not be timed here (status skipped, with the reason)."""
        row = self._config(backend, op, dtype_name, mode, shape, "skipped", ran_on, [], causal)
        row.update({"real_time": 0, "cpu_time": 0, "noise_target_met": False,
                    "bytes": cost[0], "flops": cost[1], "gbps": None, "tflops": None,
                    "bandwidth_fraction": None, "flop_fraction": None, "message": reason,
                    "error_occurred": True, "error_message": reason, "checks": []})
        return self._add(row, extra)
