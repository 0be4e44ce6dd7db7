#!/usr/bin/env bash
# What glabench takes from a plugin is checked, not trusted (docs/design.md §9), through
# the CLI, in worker processes and with --no-isolate:
#   - a message buffer the plugin fills without a terminating NUL
#     (plugins/test_plugin.cpp, variant unterminated) is read up to its capacity − 1
#     bytes and no further: the recorded message is exactly those bytes;
#   - a capability with an op or a mode ABI 1 does not have, and a knob not named after
#     its backend, make the loader refuse the plugin: exit 2 naming the file, the entry
#     and the rule (listed as not loaded when found in a searched folder);
#   - results record exactly the knobs a backend's table names, where set: a backend
#     named aws records AWS_TEST_TILE, never AWS_SECRET_ACCESS_KEY.
set -u
glabench=$1 plugin_dir=$2 fixture=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}
lib() { echo "--backend-lib=$plugin_dir/glabench_backend_test_$1.so"; }

# --- Message buffers ------------------------------------------------------------------
for mode in --no-isolate --isolate; do
  iso=(); [[ $mode == --no-isolate ]] && iso=(--no-isolate)
  expect_rc 1 "verify an unterminated message $mode" "$glabench" "${iso[@]}" "$(lib unterminated)" \
    verify --backend test_unterminated --fixture "$fixture" --json "$dir/unterminated$mode.json"
  expect_rc 1 "bench an unterminated message $mode" "$glabench" "${iso[@]}" "$(lib unterminated)" \
    bench --backend test_unterminated --shape 1,16,1,4,4 --mode fwd --json "$dir/unterminated_bench$mode.json"
  "$python" - "$dir/unterminated$mode.json" "$dir/unterminated_bench$mode.json" <<'PY' ||
import json, sys
# The plugin wrote 'a' + i % 26 into all 2048 bytes of the buffer.
letters = "".join(chr(ord("a") + i % 26) for i in range(2047))
want = "test_unterminated forward failed (runtime error): " + letters
verify = json.load(open(sys.argv[1]))["results"][0]
assert verify["status"] == "failed" and verify["message"].endswith(want), verify["message"]
assert verify["message"].count("test_unterminated forward failed") == 1, verify["message"]
(row,) = json.load(open(sys.argv[2]))["benchmarks"]
assert row["status"] == "failed" and row["message"].endswith(want), row["message"]
PY
    fail "unterminated message $mode: not exactly the buffer's first 2047 bytes"
done

# --- Capabilities and knobs checked at load ---------------------------------------------
refusals=(
  "unknown_op|backend 'test_unknown_op' capability 1 has op 7, not one of GLABENCH_OP_GLA (0), GLABENCH_OP_RWKV6 (1), GLABENCH_OP_SOFTMAX_ATTN (2)"
  "unknown_mode|backend 'test_unknown_mode' capability 0 has mode 5, not one of GLABENCH_MODE_FORWARD (0), GLABENCH_MODE_BACKWARD (1)"
  "foreign_knob|backend 'test_foreign_knob' knob 1 'HF_TOKEN' is not TEST_FOREIGN_KNOB_… (a knob is named after its backend: TEST_FOREIGN_KNOB_ and then A-Z, 0-9 and _)"
)
mkdir -p "$dir/search"
for entry in "${refusals[@]}"; do
  variant=${entry%%|*} rule=${entry#*|}
  file=$plugin_dir/glabench_backend_test_$variant.so
  for iso in --no-isolate ""; do
    # shellcheck disable=SC2086
    expect_rc 2 "load $variant $iso" "$glabench" $iso "$(lib "$variant")" list
    [[ "$out" == *"$file: $rule"* ]] || fail "load $variant $iso: message lacks '$file: $rule': $out"
  done
  cp "$file" "$dir/search/"
done
expect_rc 0 "list a folder of refused plugins" env GLABENCH_BACKEND_PATH="$dir/search" "$glabench" list
for entry in "${refusals[@]}"; do
  variant=${entry%%|*} rule=${entry#*|}
  [[ "$out" == *"not loaded: $dir/search/glabench_backend_test_$variant.so: $rule"* ]] ||
    fail "list: $variant not listed as not loaded: $out"
done

# --- Knobs: an allow-list ---------------------------------------------------------------
export AWS_SECRET_ACCESS_KEY=glabench-test-secret AWS_TEST_TILE=4 AWS_TEST_TILEX=glabench-test-x
for mode in --no-isolate --isolate; do
  iso=(); [[ $mode == --no-isolate ]] && iso=(--no-isolate)
  expect_rc 1 "verify aws $mode" "$glabench" "${iso[@]}" "$(lib aws)" verify --backend aws \
    --fixture "$fixture" --json "$dir/aws_verify$mode.json"
  expect_rc 1 "bench aws $mode" "$glabench" "${iso[@]}" "$(lib aws)" bench --backend aws \
    --shape 1,16,1,4,4 --json "$dir/aws_bench$mode.json"
  for f in "$dir/aws_verify$mode.json" "$dir/aws_bench$mode.json"; do
    "$python" -c 'import json, sys
env = json.load(open(sys.argv[1]))["context"]["backend_environment"]
assert env == {"AWS_TEST_TILE": "4"}, env' "$f" || fail "$f: backend_environment is not the knob alone"
    grep -q "glabench-test-" "$f" && fail "$f: holds a variable that is not a knob"
  done
done
unset AWS_SECRET_ACCESS_KEY AWS_TEST_TILE AWS_TEST_TILEX

echo "$failures failures"
[[ $failures == 0 ]]
