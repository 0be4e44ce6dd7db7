#!/usr/bin/env python3
"""Times PyTorch's scaled_dot_product_attention as the peer of glabench's softmax_attn.

torch.nn.functional.scaled_dot_product_attention (SDPA), causal and full (no mask), written
as rows of glabench's results schema with "peer": true, so `glabench compare` and `glabench
report` read them as ordinary rows: backend `torch.sdpa`, the mask in each row as glabench
bench --mask writes it ("causal": true or false, a full-mask row's name ending in /full),
so that its rows pair with our backends' of the same mask. Each row names the SDPA kernel
that ran (`sdpa_kernel`): the first of --kernels (default flash, then efficient, then
math; cudnn is the fourth) that runs the configuration here, forward and, for fwdbwd,
backward. On CUDA, flash takes bf16 and fp16 but not fp32, which falls to efficient; on
the CPU, torch's flash kernel takes both. With --each-kernel, each kernel of --kernels is
a peer of its own, backend `torch.sdpa.<kernel>` (torch.sdpa.flash, torch.sdpa.cudnn, …),
whose rows run that kernel alone, or are skipped with SDPA's reason where it refuses.

The policy is fla_peers.py's (bench_policy.py, shared with it), as glabench bench applies
it:
- inputs from the bench's softmax_attn distribution (reference/src/random_inputs.cpp):
  q, k ~ N(0, K^-1/2), v, do ~ N(0, 1), in [B,T,H,D], rounded to the dtype once;
  scale = K^-1/2. SDPA gets them as [B,H,T,D] views (transpose(1, 2): no copy);
- one untimed call, 3 warm-up calls; per sample a cache flush (CUDA: a memset of an
  L2-sized buffer; CPU: twice the last-level cache), then the call between two CUDA
  events (CPU: time.perf_counter): --timing eager, the call as it comes (fwdbwd: the
  forward and autograd's backward with do, gradients accumulating into .grad), or
  --timing graph (CUDA only; on the CPU its rows are skipped), a replay of the call
  captured in a CUDA graph (fwdbwd: the forward and torch.autograd.grad of q, k, v
  with do);
- stop at cv ≤ 0.5 % with ≥ 10 samples, else at 500, else after 1 s with ≥ 5;
- a quick verify, before timing, of o and lse against fp64 on the same rounded inputs,
  over the first --verify-tokens queries of every (batch, head) (causal: against the
  same prefix of keys; full: against all T keys), at glabench's thresholds (fp32
  1e-5, fp16 5e-3, bf16 1e-2). SDPA returns no lse: it is read from the aten op that
  SDPA dispatches to for the kernel (flash, efficient, cudnn), whose o must equal SDPA's
  bit for bit; the math kernel has none, and the row's `unchecked` says why. A peer
  above a threshold keeps its time; its check says passed: false;
- o of the last timed call against the verify's: equal bit for bit, or within the
  threshold, else the row fails. A call that cannot be captured gives a skipped row.
Rows record "timing" (a graph row's name ends in /graph), "timed_outputs_identical" and
"timed_outputs_rel_l2", as glabench's rows do; softmax_attn has no gates, so no "gates".

usage: sdpa_peers.py --out FILE [--shapes B,T,H,K,V ...] [--dtypes bf16,fp32]
                     [--modes fwd,fwdbwd] [--mask causal full]
                     [--kernels flash,efficient,cudnn,math] [--each-kernel]
                     [--timing eager|graph ...] [--device cuda|cpu]
                     [--seed N] [--verify-tokens N]
  --mask takes what glabench bench --mask takes: causal and/or full, as several values
  or a comma-separated list (default: both); --masks and the old name noncausal for full
  are still read. --timing may be repeated or take a comma-separated list.
"""
import argparse
import dataclasses
import re
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from bench_policy import (DTYPE, TIMINGS, Config, Place, ResultsFile, add_timing_option, check,
                          describe, first_line, measure_peaks, names_option, normals, rel_l2,
                          results_context)

KERNELS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
           "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
BACKEND = "torch.sdpa"
MASKS = {"causal": True, "full": False, "noncausal": False}  # noncausal: the old name of full
REFERENCE_CHUNK = 1 << 25  # fp64 scores the reference holds at once (256 MiB)


def make_inputs(B, T, H, K, V, seed, place):
    """fp64 inputs of the bench's softmax_attn distribution, drawn in glabench's order."""
    n = normals(place, seed)
    return {"q": n(B, T, H, K, std=K ** -0.25), "k": n(B, T, H, K, std=K ** -0.25),
            "v": n(B, T, H, V), "do": n(B, T, H, V)}


def heads_first(t):
    """[B,T,H,D] as SDPA's [B,H,T,D]: a view, no copy."""
    return t.transpose(1, 2)


def sdpa(x, causal, scale):
    return F.scaled_dot_product_attention(heads_first(x["q"]), heads_first(x["k"]),
                                          heads_first(x["v"]), is_causal=causal, scale=scale)


def reference(x, causal, scale, tokens):
    """fp64 o [B,tokens,H,V] and lse [B,H,tokens] of the first `tokens` queries (inputs
    already rounded): lse = log Σ exp(scale·q kᵀ + mask), o = softmax(…) v."""
    B, T, H, _ = x["q"].shape
    keys = tokens if causal else T
    q, k, v = x["q"][:, :tokens].double(), x["k"][:, :keys].double(), x["v"][:, :keys].double()
    o = torch.empty(B, tokens, H, v.shape[-1], dtype=torch.float64, device=q.device)
    lse = torch.empty(B, H, tokens, dtype=torch.float64, device=q.device)
    masked = torch.ones(tokens, keys, dtype=torch.bool, device=q.device).triu(1) if causal else None
    step = max(1, REFERENCE_CHUNK // (tokens * keys))
    for b in range(B):
        for h in range(0, H, step):
            s = scale * torch.einsum("thd,shd->hts", q[b, :, h:h + step], k[b, :, h:h + step])
            if causal:
                s.masked_fill_(masked, float("-inf"))
            l = torch.logsumexp(s, dim=-1)
            o[b, :, h:h + step] = torch.einsum("hts,shv->thv", torch.exp(s - l[..., None]),
                                               v[b, :, h:h + step])
            lse[b, h:h + step] = l
    return o, lse


def choose_kernel(names, x, causal, scale, backward):
    """(the first kernel of `names` that runs this configuration here, the reasons the
    ones before it did not): SDPA refuses a kernel it cannot use, saying why in a warning."""
    reasons = []
    for name in names:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                with sdpa_kernel(KERNELS[name]):
                    o = sdpa(x, causal, scale)
                    if backward:
                        torch.autograd.grad(o, [x["q"], x["k"], x["v"]], heads_first(x["do"]))
                return name, reasons
            except RuntimeError as e:
                why = refusal([first_line(w.message) for w in said]) or first_line(e)
                reasons.append(f"{name}: {why}")
    return None, reasons


def refusal(warned):
    """Why SDPA refused a kernel, from its warnings: without torch's source locations and
    the notes on the kernels that sdpa_kernel turned off."""
    text = re.sub(r"\s*\(Triggered internally at [^)]*\)", "", " ".join(warned))
    text = re.sub(r"[^.:]*(?:has been runtime disabled\.|kernel not used because:)", "", text)
    return " ".join(text.split())


def kernel_lse(kernel, place, x, causal, scale, o):
    """(lse [B,H,T] from the aten op SDPA dispatches to for `kernel`, None) or (None, why
    not). The op's o must equal SDPA's `o` bit for bit, else its lse is not SDPA's."""
    q, k, v = (heads_first(x[n]) for n in ("q", "k", "v"))
    try:
        if kernel == "flash" and not place.cuda:
            out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(
                q, k, v, 0.0, causal, scale=scale)
        elif kernel == "flash":
            out = torch.ops.aten._scaled_dot_product_flash_attention.default(
                q, k, v, 0.0, causal, False, scale=scale)
        elif kernel == "efficient":
            out = torch.ops.aten._scaled_dot_product_efficient_attention.default(
                q, k, v, None, True, 0.0, causal, scale=scale)
        elif kernel == "cudnn":
            out = torch.ops.aten._scaled_dot_product_cudnn_attention.default(
                q, k, v, None, True, 0.0, causal, False, scale=scale)
        else:
            return None, f"SDPA's {kernel} kernel computes no lse"
    except (RuntimeError, TypeError, AttributeError) as e:
        return None, f"the aten op of the {kernel} kernel failed: {str(e).splitlines()[0]}"
    if not torch.equal(out[0], o):
        return None, f"the aten op of the {kernel} kernel gives another o than SDPA"
    B, T, H, _ = x["q"].shape
    return out[1].reshape(B, H, -1)[..., :T], None  # efficient pads T to 32 (CUDA)


def verify(tensor, got, ref, dtype_name):
    """glabench's check of one tensor: rel_l2 and max_abs against the fp64 reference."""
    return check(tensor, rel_l2(got, ref), dtype_name,
                 (got.double() - ref).abs().max().item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", nargs="+", default=["4,1024,4,100,100", "4,2048,16,128,128",
                                                      "2,16384,16,128,128"])
    ap.add_argument("--dtypes", default="bf16,fp32")
    ap.add_argument("--modes", default="fwd,fwdbwd")
    ap.add_argument("--mask", "--masks", dest="masks", nargs="+", action="extend",
                    help="causal and/or full (no mask), as glabench bench --mask: several "
                         "values, a comma-separated list, or repeated (default: both)")
    ap.add_argument("--kernels", default="flash,efficient,math",
                    help=f"SDPA kernels ({', '.join(KERNELS)}) in order of preference; the "
                         f"first that runs is timed")
    ap.add_argument("--each-kernel", action="store_true",
                    help="one peer per kernel of --kernels, torch.sdpa.<kernel>, each row "
                         "running that kernel alone")
    add_timing_option(ap)
    ap.add_argument("--device", default="cuda", help="cuda (CUDA events) or cpu (host clock)")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--verify-tokens", type=int, default=512)
    args = ap.parse_args()
    kernels = args.kernels.split(",")
    masks = [m for value in args.masks or ["causal,full"] for m in value.split(",")]
    for name, known, what in [(k, KERNELS, "kernel") for k in kernels] + \
                             [(d, DTYPE, "dtype") for d in args.dtypes.split(",")] + \
                             [(m, ("fwd", "fwdbwd"), "mode") for m in args.modes.split(",")]:
        if name not in known:
            ap.error(f"unknown {what} '{name}' (one of {', '.join(known)})")
    for m in masks:
        if m not in MASKS:
            ap.error(f"--mask: unknown mask '{m}' (one of causal, full)")
    causal_masks = list(dict.fromkeys(MASKS[m] for m in masks))  # in order, once each
    timings = names_option(ap, args.timing, "--timing", "timing", TIMINGS, "eager")
    # (backend, the kernels it may run): one peer, or one per kernel
    peers = ([(f"{BACKEND}.{k}", [k]) for k in kernels] if args.each_kernel
             else [(BACKEND, kernels)])

    place = Place(args.device)
    context = results_context(place, args.seed, args.verify_tokens,
                              {"torch_version": torch.__version__},
                              {"sdpa_kernels": kernels, "sdpa_each_kernel": args.each_kernel,
                               "timing": timings})
    results = ResultsFile(args.out, context, measure_peaks(place))
    op = "softmax_attn"
    for si, shape in enumerate(args.shapes):
        B, T, H, K, V = (int(s) for s in shape.split(","))
        base = make_inputs(B, T, H, K, V, args.seed + si, place)
        scale = K ** -0.5
        tokens = min(T, args.verify_tokens)
        for dname in args.dtypes.split(","):
            rounded = {n: t.to(DTYPE[dname]) for n, t in base.items()}
            for causal in causal_masks:
                ref_o, ref_lse = reference(rounded, causal, scale, tokens)
                for backend, allowed in peers:
                    for mode in args.modes.split(","):
                        config = Config(backend, op, dname, mode, (B, T, H, K, V), causal)
                        x = {n: t.clone().requires_grad_(config.backward and n != "do")
                             for n, t in rounded.items()}
                        kernel, refused = choose_kernel(allowed, x, causal, scale, config.backward)
                        if kernel is None:
                            for timing in timings:
                                row = results.add_skipped(
                                    dataclasses.replace(config, timing=timing), place.ran_on,
                                    "no SDPA kernel runs this here: " + "; ".join(refused))
                                print(describe(row), flush=True)
                            continue
                        extra = {"sdpa_kernel": kernel}
                        if refused:
                            extra["sdpa_refused"] = refused
                        with sdpa_kernel(KERNELS[kernel]):
                            with torch.no_grad():
                                o = sdpa(x, causal, scale)
                                lse, why_not = kernel_lse(kernel, place, x, causal, scale, o)
                            checks = [verify("o", heads_first(o)[:, :tokens], ref_o, dname)]
                            if lse is not None:
                                checks.append(verify("lse", lse[..., :tokens], ref_lse, dname))
                            if why_not:
                                extra["unchecked"] = {"lse": why_not}
                            cotangents = (heads_first(x["do"]),) if config.backward else None
                            for timing in timings:
                                row = results.add_measured(
                                    place, dataclasses.replace(config, timing=timing),
                                    lambda: (sdpa(x, causal, scale),), o, checks,
                                    [x["q"], x["k"], x["v"]], cotangents, extra)
                                print(describe(row, f"{kernel:9s} "), flush=True)
                        del x, o, lse, cotangents
                        place.empty_cache()
    results.write()


if __name__ == "__main__":
    sys.exit(main())
