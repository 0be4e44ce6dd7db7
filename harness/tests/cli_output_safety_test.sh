#!/usr/bin/env bash
# Results never lost or half-written, and hostile strings escaped, through the CLI:
#   - an output path that cannot be written (missing folder, a folder, a device, /proc)
#     fails with exit 2 before any work, and nothing is written;
#   - the temporary file is not at a predictable name: links planted at the old names
#     (out.json.tmp-<pid>) and at the target are never followed;
#   - `report --out DIR` appears whole by one rename; on failure no DIR and no leftovers;
#     an existing DIR is replaced only when it is a glabench report folder;
#   - a backend's version and messages, and a fixture's file name, holding ESC, newlines
#     and bytes that are not UTF-8 reach the console escaped and the JSON as valid UTF-8.
set -u
glabench=$1 plugin_dir=$2 fixture=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
contains() { [[ "$1" == *"$2"* ]]; }
raw_bytes() {  # raw_bytes TEXT: false if TEXT holds ESC, CR, BEL or the bytes 0xfe, 0xff
  ! LC_ALL=C grep -qP '[\x1b\r\x07\xfe\xff]' <<< "$1"
}
leftovers() { find "$1" -mindepth 1 \( -name '.*.tmp-*' -o -name '.*.old-*' \); }  # staging names
python=${GLABENCH_PYTHON:-python3}
hostile="$plugin_dir/glabench_backend_test_hostile_strings.so"
cd "$dir" || exit 1

# --- Output paths checked before any work ------------------------------------------
expect_rc 2 "verify --json into a missing folder" "$glabench" verify --backend naive_recurrent \
  --fixture "$fixture" --json "$dir/nonexistent/dir/x.json"
contains "$out" "--json $dir/nonexistent/dir/x.json" && contains "$out" "does not exist" ||
  fail "missing folder message: $out"
contains "$out" "passed" && fail "verify ran before refusing its --json: $out"
[[ ! -e "$dir/nonexistent" ]] || fail "a folder was created for --json"

expect_rc 2 "bench --json into a missing folder" "$glabench" bench --backend naive_recurrent \
  --shape 1,16,1,4,4 --json "$dir/nonexistent/b.json"
contains "$out" "does not exist" || fail "bench missing folder message: $out"
contains "$out" "timed" && fail "bench ran before refusing its --json: $out"

mkdir "$dir/a_folder"
expect_rc 2 "verify --json naming a folder" "$glabench" verify --backend naive_recurrent \
  --fixture "$fixture" --json "$dir/a_folder"
contains "$out" "is a folder" || fail "folder message: $out"
[[ -z "$(ls -A "$dir/a_folder")" ]] || fail "something was written into the folder"

expect_rc 2 "verify --json /dev/null" "$glabench" verify --backend naive_recurrent \
  --fixture "$fixture" --json /dev/null
contains "$out" "not a regular file" || fail "/dev/null message: $out"

expect_rc 2 "verify --json where no file can be made" "$glabench" verify \
  --backend naive_recurrent --fixture "$fixture" --json /proc/glabench.json
contains "$out" "cannot create a file in /proc" || fail "/proc message: $out"

if [[ $(id -u) != 0 ]]; then  # root may write anywhere; the /proc case covers it
  mkdir "$dir/read_only" && chmod 555 "$dir/read_only"
  expect_rc 2 "verify --json into a read-only folder" "$glabench" verify \
    --backend naive_recurrent --fixture "$fixture" --json "$dir/read_only/x.json"
  contains "$out" "cannot create a file" || fail "read-only message: $out"
  chmod 755 "$dir/read_only"
fi

# compare's --json is checked before its inputs are even read.
expect_rc 2 "compare --json into a missing folder" "$glabench" compare nothing.json nothing.json \
  --json "$dir/nonexistent/c.json"
contains "$out" "does not exist" && ! contains "$out" "cannot be opened" ||
  fail "compare checked its inputs first: $out"

# A results file nested deeper than any glabench writes is refused, naming the file,
# before any recursive step (printing, plotting) meets it.
python3 -c 'import sys; d = 2000; sys.stdout.write("{\"context\": {\"x\": " + "[" * d + "]" * d + "}, \"benchmarks\": []}")' \
  > "$dir/deep.json"
expect_rc 2 "compare of a deeply nested file" "$glabench" compare "$dir/deep.json" "$dir/deep.json"
contains "$out" "deep.json" && contains "$out" "context.x[0][0]" && contains "$out" "nest deeper than 64 levels" ||
  fail "deeply nested results: $out"
expect_rc 2 "report of a deeply nested file" "$glabench" report "$dir/deep.json" --out "$dir/deep_report"
contains "$out" "nest deeper than 64 levels" || fail "report of deeply nested results: $out"

# --- Planted symbolic links -----------------------------------------------------------
echo precious > "$dir/victim.txt"
mkdir "$dir/planted"
# The glabench below runs as this pid (exec), the name the old scheme would have used.
expect_rc 0 "verify past planted links" bash -c '
  ln -s "$1/victim.txt" "$1/planted/out.json.tmp-$$"
  ln -s "$1/victim.txt" "$1/planted/out.json"
  exec "$2" verify --backend naive_recurrent --fixture "$3" --json "$1/planted/out.json"' \
  _ "$dir" "$glabench" "$fixture"
[[ "$(cat "$dir/victim.txt")" == precious ]] || fail "the victim of a planted link was written"
[[ -f "$dir/planted/out.json" && ! -L "$dir/planted/out.json" ]] ||
  fail "the link at the target was not replaced by the results"
"$python" -c 'import json,sys; assert json.load(open(sys.argv[1]))["results"]' \
  "$dir/planted/out.json" || fail "results after planted links"
n=$(ls -A "$dir/planted" | wc -l)
[[ $n == 2 && -L $(echo "$dir"/planted/out.json.tmp-*) ]] ||
  fail "planted folder holds $(ls -A "$dir/planted")"

# --- Hostile strings from a backend -----------------------------------------------------
# Checked in process (--no-isolate: the plugin's bytes reach the printers as they are)
# and through the worker processes (their pipe carries JSON, which may replace the bytes
# that are not UTF-8 before glabench escapes them: either way none reach the console).
expect_rc 0 "list a hostile backend" "$glabench" --backend-lib "$hostile" list
raw_bytes "$out" || fail "list printed raw control bytes: $(printf %q "$out")"
contains "$out" 'test_hostile_strings 6.6.6\x1b[2J\x07\r\u009b31m' || fail "list version: $out"
contains "$out" 'git c0ffee\x1b[2J\nFORGED LINE' || fail "list commit: $out"
grep -q '^FORGED' <<< "$out" && fail "a plugin's commit forged a list line: $out"

for mode in --no-isolate --isolate; do
  iso=(); [[ $mode == --no-isolate ]] && iso=(--no-isolate)
  expect_rc 1 "verify a hostile backend $mode" "$glabench" "${iso[@]}" --backend-lib "$hostile" \
    verify --backend test_hostile_strings --fixture "$fixture" --json "$dir/hostile_verify$mode.json"
  raw_bytes "$out" || fail "verify $mode printed raw bytes: $(printf %q "$out")"
  contains "$out" 'hostile \x1b[31mRED\x1b[0m\nFORGED LINE: 0 failed\n' ||
    fail "verify $mode message not escaped: $out"
  [[ $mode == --isolate ]] || contains "$out" '\nFORGED LINE: 0 failed\n\xff\xfe end' ||
    fail "verify $mode: the bytes that are not UTF-8 not escaped: $out"
  grep -q '^FORGED' <<< "$out" && fail "a plugin message forged an output line: $out"
  "$python" - "$dir/hostile_verify$mode.json" "$mode" <<'PY' || fail "verify JSON of a hostile backend $mode"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
m = d["results"][0]["message"]
assert "hostile \\x1b[31mRED\\x1b[0m\\nFORGED LINE: 0 failed\\n" in m, m
assert sys.argv[2] == "--isolate" or "\\xff\\xfe end" in m, m
assert not any(ord(c) < 0x20 or ord(c) == 0x7f for c in m), m
v = d["context"]["backend_builds"]["test_hostile_strings"]["version"]  # the table's, escaped
assert v == "6.6.6\\x1b[2J\\x07\\r\\u009b31m", repr(v)
PY

  expect_rc 1 "bench a hostile backend $mode" "$glabench" "${iso[@]}" --backend-lib "$hostile" \
    bench --backend test_hostile_strings --shape 1,16,1,4,4 --mode fwd \
    --json "$dir/hostile_bench$mode.json"
  raw_bytes "$out" || fail "bench $mode printed raw bytes: $(printf %q "$out")"
  grep -q '^FORGED' <<< "$out" && fail "a plugin message forged a bench line: $out"
  contains "$out" 'hostile \x1b[31mRED\x1b[0m\nFORGED LINE' || fail "bench $mode message not escaped: $out"
  "$python" - "$dir/hostile_bench$mode.json" "$mode" <<'PY' || fail "bench JSON of a hostile backend $mode"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
r = d["benchmarks"][0]
assert r["status"] == "failed" and "\\x1b[31mRED" in r["message"], r
assert sys.argv[2] == "--isolate" or "\\xff\\xfe end" in r["message"], r
v = d["context"]["backend_builds"]["test_hostile_strings"]["version"]
assert v == "6.6.6\\x1b[2J\\x07\\r\\u009b31m", repr(v)
c = d["context"]["backend_builds"]["test_hostile_strings"]["git_commit"]  # 64 bytes, escaped
assert c.startswith("c0ffee\\x1b[2J\\nFORGED LINE") and c.endswith("\\xff" + "0123456789" * 4 + "0"), repr(c)
PY
done
cp "$dir/hostile_bench--no-isolate.json" "$dir/hostile_bench.json"
# The same file read back: compare and report print it escaped (idempotent escaping).
expect_rc 0 "compare hostile results" "$glabench" compare "$dir/hostile_bench.json" \
  "$dir/hostile_bench.json" --json "$dir/hostile_compare.json"
raw_bytes "$out" || fail "compare printed raw bytes: $(printf %q "$out")"
"$python" -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
  "$dir/hostile_compare.json" || fail "compare JSON of hostile results"

# --- Hostile file names ---------------------------------------------------------------
# In process: the worker pipe's JSON cannot carry a path that is not UTF-8.
mkdir "$dir/names"
evil=$'gla_\e[31mred\nFORGED\xff'
cp "$fixture" "$dir/names/$evil.h5"
expect_rc 0 "verify a fixture with a hostile name" "$glabench" --no-isolate verify \
  --backend naive_recurrent --fixture "$dir/names/$evil.h5" --dtype fp64 --json "$dir/names/out.json"
raw_bytes "$out" || fail "fixture name printed raw: $(printf %q "$out")"
contains "$out" 'gla_\x1b[31mred\nFORGED\xff' || fail "fixture name not escaped: $out"
grep -q '^FORGED' <<< "$out" && fail "a file name forged an output line: $out"
"$python" - "$dir/names/out.json" <<'PY' || fail "verify JSON of a hostile fixture name"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
assert d["results"][0]["fixture"] == "gla_\\x1b[31mred\\nFORGED\\xff", d["results"][0]["fixture"]
PY
printf 'not hdf5' > "$dir/names/$evil-bad.h5"
expect_rc 2 "a bad fixture with a hostile name" "$glabench" --no-isolate verify \
  --backend naive_recurrent --fixture "$dir/names/$evil-bad.h5"
raw_bytes "$out" || fail "error message printed raw: $(printf %q "$out")"
contains "$out" 'gla_\x1b[31mred\nFORGED\xff-bad.h5' || fail "error names the file escaped: $out"

# --- report --out: whole or nothing -----------------------------------------------------
expect_rc 0 "a small bench" "$glabench" bench --backend naive_recurrent --op gla --dtype fp64 \
  --shape 1,32,1,8,8 --mode fwd --time-cap 0.2 --min-reps 5 --json "$dir/small.json"
mkdir "$dir/rep"
expect_rc 0 "report" "$glabench" report "$dir/small.json" --out "$dir/rep/report"
[[ -s "$dir/rep/report/report.md" && -s "$dir/rep/report/plots.json" ]] || fail "report content"
[[ "$(ls -A "$dir/rep")" == report ]] || fail "report left $(ls -A "$dir/rep")"

# Replaced whole: a stale plot of the old report does not survive.
touch "$dir/rep/report/stale.png"
expect_rc 0 "report replaces a report" "$glabench" report "$dir/small.json" --out "$dir/rep/report"
[[ ! -e "$dir/rep/report/stale.png" && -s "$dir/rep/report/report.md" ]] ||
  fail "the old report was not replaced whole: $(ls -A "$dir/rep/report")"
[[ "$(ls -A "$dir/rep")" == report ]] || fail "replacing left $(ls -A "$dir/rep")"

# A folder that is not a report: refused, untouched.
mkdir "$dir/rep/mine" && echo keep > "$dir/rep/mine/notes.txt"
expect_rc 2 "report over a foreign folder" "$glabench" report "$dir/small.json" --out "$dir/rep/mine"
contains "$out" "not a glabench report folder" && contains "$out" "notes.txt" ||
  fail "foreign folder message: $out"
[[ "$(ls -A "$dir/rep/mine")" == notes.txt ]] || fail "a foreign folder was changed"
echo x > "$dir/rep/a_file"
expect_rc 2 "report over a file" "$glabench" report "$dir/small.json" --out "$dir/rep/a_file"
contains "$out" "is not a folder" || fail "report over a file: $out"
expect_rc 2 "report into a missing folder" "$glabench" report "$dir/small.json" \
  --out "$dir/nonexistent/report"
contains "$out" "does not exist" || fail "report missing parent: $out"

# Bad results: exit 2, no folder, nothing left beside it.
echo '{"not": "ours"}' > "$dir/foreign.json"
expect_rc 2 "report of a bad results file" "$glabench" report "$dir/foreign.json" \
  --out "$dir/rep/bad"
[[ ! -e "$dir/rep/bad" ]] || fail "report of bad input made its folder"
[[ -z "$(leftovers "$dir/rep")" ]] || fail "report of bad input left $(leftovers "$dir/rep")"

# The plot script failing half-way (after writing a plot): no folder, no leftovers; an
# existing report stays as it was.
cat > "$dir/failing_plot.py" <<'PY'
import os, sys
out = sys.argv[sys.argv.index("--out") + 1]
open(os.path.join(out, "time_vs_t.png"), "w").write("half")
sys.exit("failing_plot.py: deliberate failure")
PY
GLABENCH_PLOT_SCRIPT="$dir/failing_plot.py" expect_rc 2 "report with a failing plot script" \
  "$glabench" report "$dir/small.json" --out "$dir/rep/half"
contains "$out" "failed" || fail "failing plot script message: $out"
[[ ! -e "$dir/rep/half" ]] || fail "a failed report left its folder"
before=$(cat "$dir/rep/report/report.md")
GLABENCH_PLOT_SCRIPT="$dir/failing_plot.py" expect_rc 2 "failing report over a report" \
  "$glabench" report "$dir/small.json" --out "$dir/rep/report"
[[ "$(cat "$dir/rep/report/report.md")" == "$before" ]] || fail "a failed report changed the old one"
[[ -z "$(leftovers "$dir/rep")" ]] || fail "failed reports left $(leftovers "$dir/rep")"

# A report of the hostile bench: valid UTF-8 without raw control bytes.
expect_rc 0 "report of hostile results" "$glabench" report "$dir/hostile_bench.json" \
  --out "$dir/rep/hostile"
raw_bytes "$(cat "$dir/rep/hostile/report.md")" || fail "report.md holds raw control bytes"
"$python" -c 'open(__import__("sys").argv[1], encoding="utf-8", errors="strict").read()' \
  "$dir/rep/hostile/report.md" || fail "report.md is not UTF-8"

[[ -z "$(leftovers "$dir")" ]] || fail "temporaries left: $(leftovers "$dir")"
echo "$failures failures"
[[ $failures == 0 ]]
