#!/usr/bin/env python3
"""peer_table.py (Python alone): peers picked by backend name (--peers, default fla.* and
torch.sdpa*; older files' "peer": true rows too) from one results file holding ours and
theirs, or from several; rows pair with the peer's row of the same gate regime and timing
only, and no backend name, however hostile, ends a cell or forges a table row; each
backend's spread across gate regimes, with ours' worst ratio to the peer; with --accuracy,
ours' quick-verify rel_l2 beside the peer's; a peer whose recorded version says it was not
timed at its best gets a note."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peer_table.py")


def row(backend, ms, gates="mild", timing="eager", peer=False, op="gla", status="ok"):
    r = {"backend": backend, "op": op, "dtype": "bf16", "mode": "fwd", "B": 1, "T": 64,
         "H": 2, "K": 16, "V": 16, "status": status, "median_ms": ms, "timing": timing}
    if op == "softmax_attn":
        r["causal"] = True
    else:
        r["gates"] = gates
    if peer:
        r["peer"] = True  # as the retired peer scripts wrote them
    return r


def table(d, rows, *args, name="rows.json"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": rows}, f)
    return subprocess.run([sys.executable, SCRIPT, path, *args], check=True, capture_output=True,
                          text=True).stdout


def main():
    hostile = "evil | 1 | 2 |\n| forged | row"
    # One bench's file: ours and fla's bridge rows, no "peer" marks.
    rows = [row(hostile, 1.0), row("ours", 2.0, gates="fla"), row("ours", 3.0, timing="graph"),
            row("fla.chunk_gla", 4.0), row("fla.chunk_gla", 8.0, gates="fla"),
            row("fla.chunk_gla", 6.0, timing="graph"),
            row("fla.fused_recurrent_gla", 9.0, status="failed"),
            row("ring", 1.0, op="softmax_attn"), row("torch.sdpa.flash", 2.0, op="softmax_attn"),
            row("torch.sdpa.cudnn", 0.5, op="softmax_attn")]
    with tempfile.TemporaryDirectory() as d:
        out = table(d, rows)
        lines = out.split("\n\n")[0].splitlines()  # the table, without the notes after it
        assert len(lines) == 2 + 4, out  # header, rule, one line per row of ours
        assert all(line.count(" | ") == lines[0].count(" | ") for line in lines[2:]), out
        assert not any(line.startswith("| forged") for line in lines), out
        assert r"evil \| 1 \| 2 \| \| forged \| row" in out, out
        # The default peers: fla.* and torch.sdpa*, by name; a failed row is no column.
        assert lines[0] == ("| op | dtype | mode | B T H K V | backend | ms | ÷ fla.chunk_gla | "
                            "÷ torch.sdpa.cudnn | ÷ torch.sdpa.flash |"), out
        # Each of ours against the peer's row of its own regime and timing.
        assert "| gla gates-fla | bf16 | fwd | 1 64 2 16 16 | ours | 2 | 0.250 (8) | – | – |" in out, out
        assert ("| gla gates-mild graph | bf16 | fwd | 1 64 2 16 16 | ours | 3 | 0.500 (6) | – | – |"
                in out), out
        assert ("| softmax_attn causal | bf16 | fwd | 1 64 2 16 16 | ring | 1 | – | 2.000 (0.5) | "
                "0.500 (2) |" in out), out

        # The spread across regimes: fla.chunk_gla ran mild and fla eager (4, 8); ours' backends
        # ran one regime each of a timing, so they have no row.
        spread = out.split("\n\n")[1].splitlines()
        assert spread[0] == ("| op | dtype | mode | B T H K V | backend | regimes | fastest ms | "
                             "slowest ms | slowest ÷ fastest | worst ÷ fla.chunk_gla | "
                             "worst ÷ torch.sdpa.cudnn | worst ÷ torch.sdpa.flash |"), out
        assert spread[2:] == ["| gla | bf16 | fwd | 1 64 2 16 16 | fla.chunk_gla | 2 | 4 (mild) | "
                              "8 (fla) | 2.000 | – | – | – |"], out
        # Ours in three regimes, the peer in two of them: the worst ratio over those two.
        three = [row("ours", 1.0), row("ours", 3.0, gates="strong"), row("ours", 9.0, gates="cliff"),
                 row("fla.chunk_gla", 4.0), row("fla.chunk_gla", 5.0, gates="strong")]
        spread = table(d, three, name="three.json").split("\n\n")[1]
        assert ("| gla | bf16 | fwd | 1 64 2 16 16 | ours | 3 | 1 (mild) | 9 (cliff) | 9.000 | "
                "0.600 (strong) |") in spread, spread
        assert "| fla.chunk_gla | 2 | 4 (mild) | 5 (strong) | 1.250 | – |" in spread, spread

        # --accuracy: ours' quick-verify rel_l2 beside the peer's on the same key, bold only
        # where ours is more than 0.5 % larger; a tensor only one side checked has no column.
        checked = [row("ours", 1.0), row("fla.chunk_gla", 2.0), row("ours", 1.0, timing="graph")]
        rels = [{"dq": 2.0e-3, "dg": 3.0e-3, "du": 1e-3}, {"dq": 1.995e-3, "dg": 2.0e-3}, {"dq": 1e-3}]
        for r, rel in zip(checked, rels):
            r["checks"] = [{"tensor": t, "rel_l2": v, "passed": True} for t, v in rel.items()]
        out = table(d, checked, "--accuracy", name="checked.json")
        acc = out.split("\n\n")[1].splitlines()
        assert acc[0] == ("| op | dtype | mode | B T H K V | backend | peer | dq rel_l2 (peer) | "
                          "dg rel_l2 (peer) |"), out
        assert acc[2:] == ["| gla gates-mild | bf16 | fwd | 1 64 2 16 16 | ours | fla.chunk_gla | "
                           "0.002 (0.00199) | **0.003 (0.002)** |"], out
        assert "rel_l2" not in table(d, checked, name="checked.json"), "only with --accuracy"

        # --peers names them: one peer, and fla.chunk_gla becomes one of ours.
        out = table(d, rows, "--peers", "torch.sdpa.flash")
        assert "÷ torch.sdpa.cudnn" not in out and "÷ fla.chunk_gla" not in out, out
        assert "| ring | 1 | 0.500 (2) |" in out and "| torch.sdpa.cudnn | 0.5 | 0.250 (2) |" in out, out
        assert "| gla gates-fla | bf16 | fwd | 1 64 2 16 16 | fla.chunk_gla | 8 | – |" in out, out
        out = table(d, rows, "--peers", "fla.chunk_gla,torch.sdpa.flash")
        assert "÷ fla.chunk_gla | ÷ torch.sdpa.flash |" in out and "÷ torch.sdpa.cudnn" not in out, out

        # Older files: peers in files of their own, marked "peer": true, under any name.
        ours_rows = [row("ours", 2.0, gates="fla")]
        table(d, ours_rows, name="ours.json")
        table(d, [row("sdpa_legacy", 8.0, gates="fla", peer=True)], name="old.json")
        out = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "ours.json"),
                              os.path.join(d, "old.json")], check=True, capture_output=True,
                             text=True).stdout
        assert "| ours | 2 | 0.250 (8) |" in out and "÷ sdpa_legacy" in out, out

        # No peer at all: ours alone, said on stderr.
        done = subprocess.run([sys.executable, SCRIPT, os.path.join(d, "ours.json")], check=True,
                              capture_output=True, text=True)
        assert done.stdout.splitlines()[0] == "| op | dtype | mode | B T H K V | backend | ms |", done
        assert "no timed rows of a peer" in done.stderr, done

        # Notes from the versions the files record: a peer tuned per shape gets none; one with
        # a single autotune configuration, or tuned by Triton's own keys, gets one each.
        def with_versions(name, versions):
            path = os.path.join(d, name)
            builds = {b: {"version": v} for b, v in versions.items()}
            with open(path, "w") as f:
                json.dump({"context": {"backend_builds": builds}, "benchmarks": rows}, f)
            return subprocess.run([sys.executable, SCRIPT, path], check=True, capture_output=True,
                                  text=True).stdout
        fair = "glabench.fla:chunk_gla; python 3.12.3; torch 2.11; fla-core 0.6.0; Triton autotuning kept per shape"
        out = with_versions("fair.json", {"fla.chunk_gla": fair, "ours": "1.0"})
        assert "note" not in out, out
        out = table(d, rows)  # no versions recorded: fla's tuning unknown, SDPA's irrelevant
        assert "> **note:** fla.chunk_gla: its file records no version" in out, out
        assert out.count("> **note:**") == 1, out
        out = with_versions("one.json", {"fla.chunk_gla": fair.replace(
            "; Triton autotuning kept per shape", ", one autotune configuration per kernel")})
        assert "> **note:** fla.chunk_gla ran with one autotune configuration per kernel" in out, out
        out = with_versions("kernel.json", {"fla.chunk_gla": fair.split("; Triton")[0],
                                            "torch.sdpa.flash": "glabench.sdpa:flash; python 3.12.3"})
        assert "> **note:** fla.chunk_gla's Triton autotuning was not kept per shape" in out, out
        assert "torch.sdpa.flash" not in out.split("> **note:**", 1)[1], out  # no Triton there
    print("peer_table: ok")


if __name__ == "__main__":
    main()
