#!/usr/bin/env bash
# The performance gate for a GPU CI job: build, bench the gated backends, compare against
# a committed baseline, fail on a regression, write the report (README, "The CI regression
# gate"; examples/ci/glabench-gate.yml runs it in GitHub Actions).
#
#   scripts/ci_gate.sh [OPTIONS] [-- BENCH_ARGS...]
#       --backend NAME      a backend to gate (repeatable; default parallel_scan_cuda)
#       --baseline FILE     the results to compare against (default
#                           reports/baselines/<this GPU>/bench.json, e.g. h200 for an
#                           "NVIDIA H200")
#       --threshold PCT     fail on a row significantly slower by more than PCT percent
#                           (default 5; a decimal number ≥ 0, e.g. 5 or 2.5)
#       --out DIR           where everything goes (default ci-gate/): new.json, new.log
#                           (bench's console), compare.md, compare.json, report/
#       --build DIR         use this build (its glabench and backends) instead of building
#       --make-baseline     instead of gating: bench twice back to back, require the two
#                           runs to agree (compare, --threshold), and write the first as
#                           the baseline file
#   BENCH_ARGS: the configurations (default --shapes seed --shapes fla --dtype fp32
#   --dtype bf16): give the gate the same ones its baseline was made with.
#
# Exit: 0 the gate passed (or a baseline was written); 1 a regression, a configuration
# that failed or stopped being timed, or (--make-baseline) two runs that disagree; 2 bad
# usage or input (an option's value, refused before anything is built or run; no
# baseline; results from another GPU model). With $GITHUB_STEP_SUMMARY set, the
# comparison is appended to it.
set -uo pipefail
caller=$PWD
cd "$(dirname "$0")/.."  # defaults are relative to the checkout; paths given, to the caller
given() { [[ $1 == /* ]] && echo "$1" || echo "$caller/$1"; }

backends=() baseline="" threshold=5 out=ci-gate build="" make_baseline=0 bench_args=()
usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --backend|--baseline|--threshold|--out|--build)
      (($# >= 2)) || { echo "ci_gate.sh: $1 needs a value" >&2; exit 2; } ;;&
    --backend) backends+=("$2"); shift 2 ;;
    --baseline) baseline=$(given "$2"); shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --out) out=$(given "$2"); shift 2 ;;
    --build) build=$(given "$2"); shift 2 ;;
    --make-baseline) make_baseline=1; shift ;;
    --) shift; bench_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "ci_gate.sh: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
# The options' values, checked before any work: a typo must not cost a build and a bench.
# --threshold is glabench compare's --fail-on-regression (a finite number ≥ 0), written
# as a plain decimal so that the shell can check it.
refuse() { echo "ci_gate.sh: $*" >&2; exit 2; }
[[ $threshold =~ ^[0-9]{1,9}(\.[0-9]{1,9})?$ ]] ||
  refuse "--threshold '$threshold': must be a decimal number ≥ 0 (a percentage, e.g. 5 or 2.5)"
for b in "${backends[@]}"; do
  [[ -n $b ]] || refuse "--backend '': must name a backend"
done
[[ ! -e $out || -d $out ]] || refuse "--out '$out': exists and is not a folder"
[[ -z $build || -d $build ]] || refuse "--build '$build': is not a folder"
((${#backends[@]})) || backends=(parallel_scan_cuda)
((${#bench_args[@]})) || bench_args=(--shapes seed --shapes fla --dtype fp32 --dtype bf16)
say() { echo "ci_gate: $*"; }

# The baseline of this GPU model: "NVIDIA H200" -> reports/baselines/h200/bench.json.
if [[ -z $baseline ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  if [[ -z $gpu ]]; then
    say "no GPU found by nvidia-smi: pass --baseline FILE"; exit 2
  fi
  slug=$(tr 'A-Z' 'a-z' <<<"$gpu" | sed 's/^nvidia //; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
  baseline=reports/baselines/$slug/bench.json
fi
if ((!make_baseline)) && [[ ! -f $baseline ]]; then
  say "no baseline $baseline: make one on this GPU with"
  say "  scripts/ci_gate.sh --make-baseline --baseline $baseline ${bench_args[*]:+-- ${bench_args[*]}}"
  exit 2
fi

if [[ -z $build ]]; then
  scripts/build.sh || { say "the build failed"; exit 2; }
  build=build/release
fi
glabench=$build/glabench
[[ -x $glabench ]] || { say "no glabench in $build"; exit 2; }
mkdir -p "$out"
only=(); for b in "${backends[@]}"; do only+=(--backend "$b"); done

bench() {  # bench NAME: the gated backends' bench into $out/NAME.json, its console in NAME.log
  "$glabench" bench "${only[@]}" "${bench_args[@]}" --json "$out/$1.json" >"$out/$1.log" 2>&1
  local rc=$?
  say "bench ($1): exit $rc: $(grep -E '^[0-9]+ timed, ' "$out/$1.log" | tail -n 1)"
  grep '^WARNING' "$out/$1.log"  # e.g. a backend built without optimisation
  return "$rc"
}
compare() {  # compare BASE NEW NAME: the gate's rule; markdown in $out/NAME.md
  "$glabench" compare "$1" "$2" "${only[@]}" --fail-on-regression "$threshold" \
    --json "$out/$3.json" >"$out/$3.md"
  local rc=$?
  say "compare: exit $rc: $(tail -n 1 "$out/$3.md")"
  [[ -z ${GITHUB_STEP_SUMMARY:-} ]] || cat "$out/$3.md" >>"$GITHUB_STEP_SUMMARY"
  return "$rc"
}

if ((make_baseline)); then
  # Two runs back to back must agree, or the baseline would gate on noise.
  bench baseline_a; rc_a=$?
  bench baseline_b; rc_b=$?
  ((rc_a == 0 && rc_b == 0)) || { say "a bench failed: no baseline written"; exit 1; }
  compare "$out/baseline_a.json" "$out/baseline_b.json" compare_a_b ||
    { say "the two runs disagree (see $out/compare_a_b.md): no baseline written"; exit 1; }
  mkdir -p "$(dirname "$baseline")"
  cp "$out/baseline_a.json" "$baseline"
  say "wrote $baseline (run B and their comparison are in $out/); commit it with a note of"
  say "the device, date, commit and command, as reports/baselines/README.md does"
  exit 0
fi

bench new; bench_rc=$?
compare "$baseline" "$out/new.json" compare; compare_rc=$?
"$glabench" report "$out/new.json" --out "$out/report" >/dev/null ||
  say "no report written (matplotlib missing?)"
say "results $out/new.json, comparison $out/compare.md, report $out/report/report.md"
# compare's exit decides (it fails on rows the baseline timed that are now FAILED, GONE or
# SKIPPED too); a failure in bench beyond the gated rows fails the job as well.
if ((compare_rc != 0)); then exit "$compare_rc"; fi
if ((bench_rc == 1)); then say "bench reported a failure (see $out/new.log)"; exit 1; fi
say "passed"
