#!/usr/bin/env bash
# Worker faults, one class a run (docs/design.md §9, "Workers"):
#   watched   loading a plugin (a constructor, the entry function, device_available) runs
#             under the time limit, also for a plugin that merely lies in a searched
#             folder; a worker that stops answering outside any call is killed too
#   process   a plugin's kill(0, SIGTERM) reaches only its worker; a pipe of its own over
#             descriptors 3 and 4 changes nothing; closing every descriptor, or a fork
#             before a segfault, is recorded CRASHED at once; a child left sleeping holds
#             neither glabench's stdout (`glabench … | cat` ends) nor outlives the run
#   recorded  a plugin's chdir with relative fixture paths, or its leaked descriptors, cost
#             nothing; a worker that fails (its plugin no longer loads) fails its case or
#             configuration, never the run
#   timeouts  after two timeouts in a row a backend's remaining cases and configurations
#             are skipped, not run; verify's own default limit is in its --help
# Each with a call limit of a few seconds, and each glabench run under `timeout`: a hang
# fails the test instead of stalling it.
set -u
class=$1 glabench=$(realpath "$2") plugins=$(realpath "$3") fixtures=$(realpath "$4") dir=$5
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
lib() { echo "$plugins/glabench_backend_$1.so"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# alive PID: the process exists and is not a zombie (an orphan waits for init to reap it).
alive() { [[ -r /proc/$1/stat ]] && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]; }
# ended PID: true once PID is gone, waiting up to 5 s.
ended() {
  for _ in $(seq 50); do alive "$1" || return 0; sleep 0.1; done
  return 1
}

# run LIMIT CMD...: runs CMD (for at most LIMIT s); sets out, rc and ms (wall time).
run() {
  local limit=$1 start
  shift
  start=$(now_ms)
  out=$(timeout "$limit" "$@" 2>&1)
  rc=$?
  ms=$(($(now_ms) - start))
}

# statuses FILE BACKEND: the statuses of BACKEND's rows in a verify or bench JSON, in order.
statuses() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"] if "results" in d else d["benchmarks"]
print(" ".join(r["status"] for r in rows if r["backend"] == sys.argv[2]))
PY
}
# messages FILE BACKEND: their messages, one a line.
messages() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"] if "results" in d else d["benchmarks"]
print("\n".join(r["message"] for r in rows if r["backend"] == sys.argv[2]))
PY
}
# expect WHAT GOT WANT
expect() { [[ "$2" == "$3" ]] || fail "$1: '$2', expected '$3'"; }

# searched DIR PLUGIN...: a folder of copies of the plugins, as a searched folder must be.
searched() {
  local d=$1
  shift
  mkdir -p "$d"
  for p in "$@"; do cp "$(lib "$p")" "$d/"; done
  chmod 755 "$d" "$d"/*
}

fx() { for f in "$@"; do echo --fixture "$fixtures/$f.h5"; done; }
two=($(fx gla_basic gla_t1))

case $class in
watched)
  # Loading hangs, in a searched folder while another backend is selected, in list, and
  # named with --backend-lib.
  for fault in load_hang ctor_hang available_hang; do
    searched "$dir/search_$fault" "faulty_$fault"
    run 60 env GLABENCH_BACKEND_PATH="$dir/search_$fault" "$glabench" --call-timeout 2 verify \
      --backend naive_recurrent "${two[@]}" --dtype fp64
    [[ $rc == 0 && "$out" == *"2 passed"* ]] || fail "$fault searched, verify naive: rc=$rc $out"
    ((ms < 30000)) || fail "$fault searched: verify took $ms ms"
    run 60 env GLABENCH_BACKEND_PATH="$dir/search_$fault" "$glabench" --call-timeout 2 list
    [[ $rc == 0 && "$out" == *"not loaded:"*"faulty_$fault"*"hung"*"past the limit of 2 s"* ]] ||
      fail "$fault searched, list: rc=$rc $out"
    [[ "$out" == *naive_recurrent* ]] || fail "$fault: list lost the other backends: $out"
    run 60 "$glabench" --call-timeout 2 --backend-lib "$(lib "faulty_$fault")" verify "${two[@]}"
    [[ $rc == 2 && "$out" == *"hung"* ]] || fail "$fault --backend-lib: rc=$rc $out"
    echo "ok   $fault: not loaded after the limit ($ms ms for list)"
  done

  # A worker that stops answering outside any backend call (its plugin's signal handler
  # never returns, once a forward has): killed, the case in flight a TIMEOUT.
  run 60 "$glabench" --call-timeout 2 --backend-lib "$(lib test_spin_outside)" verify \
    --backend test_spin_outside $(fx gla_basic gla_t63 gla_t64 gla_t65) --dtype fp64 \
    --json "$dir/spin.json"
  got=$(statuses "$dir/spin.json" test_spin_outside)
  [[ $rc == 1 && "$got" == *timeout* ]] || fail "spin_outside: rc=$rc statuses '$got': $out"
  [[ "$(messages "$dir/spin.json" test_spin_outside)" == *"neither answered nor started a backend call"* ]] ||
    fail "spin_outside: no message of a worker that stopped answering: $out"
  echo "ok   spin_outside: $got ($ms ms)"
  ;;

process)
  # kill(0, SIGTERM) in a plugin: its worker's group only. glabench carries on.
  run 60 "$glabench" --call-timeout 20 --backend-lib "$(lib test_kill_group)" verify \
    --backend test_kill_group --backend naive_recurrent "${two[@]}" --dtype fp64 \
    --json "$dir/kill.json"
  expect "kill_group rc ($out)" "$rc" 1
  expect "kill_group" "$(statuses "$dir/kill.json" test_kill_group)" "crashed crashed"
  expect "kill_group: naive" "$(statuses "$dir/kill.json" naive_recurrent)" "passed passed"
  [[ "$out" == *"killed by signal 15"* ]] || fail "kill_group: no signal 15: $out"
  echo "ok   kill_group: crashed by signal 15, glabench unharmed"

  # A pipe of the plugin's own over descriptors 3 and 4: the worker's pipe is elsewhere.
  run 60 "$glabench" --call-timeout 20 --backend-lib "$(lib test_dup2_fds)" verify \
    --backend test_dup2_fds "${two[@]}" --dtype fp64 --json "$dir/dup2.json"
  expect "dup2_fds rc ($out)" "$rc" 0
  expect "dup2_fds" "$(statuses "$dir/dup2.json" test_dup2_fds)" "passed passed"
  echo "ok   dup2_fds: passed ($ms ms)"

  # Every descriptor closed: the worker cannot answer; CRASHED, well before the limit.
  run 60 "$glabench" --call-timeout 20 --backend-lib "$(lib test_close_fds)" verify \
    --backend test_close_fds "${two[@]}" --dtype fp64 --json "$dir/close.json"
  expect "close_fds rc ($out)" "$rc" 1
  expect "close_fds" "$(statuses "$dir/close.json" test_close_fds)" "crashed crashed"
  [[ "$(messages "$dir/close.json" test_close_fds)" == *pipe* ]] || fail "close_fds: message: $out"
  ((ms < 15000)) || fail "close_fds: $ms ms"
  echo "ok   close_fds: crashed ($ms ms): $(messages "$dir/close.json" test_close_fds | sed -n 1p)"

  # A child (holding every descriptor) left sleeping, then a segfault: CRASHED at once.
  run 60 "$glabench" --call-timeout 20 --backend-lib "$(lib test_fork_segv)" verify \
    --backend test_fork_segv "${two[@]}" --dtype fp64 --json "$dir/fork_segv.json"
  expect "fork_segv rc ($out)" "$rc" 1
  expect "fork_segv" "$(statuses "$dir/fork_segv.json" test_fork_segv)" "crashed crashed"
  [[ "$out" == *"killed by signal 11"* ]] || fail "fork_segv: no signal 11: $out"
  ((ms < 15000)) || fail "fork_segv: $ms ms, not at once"
  echo "ok   fork_segv: crashed by signal 11 ($ms ms for two cases)"

  # A child left sleeping for five minutes with the worker's stdout and stderr: the run,
  # piped, ends, and the child with it.
  for redirect in "" "2>&1"; do
    rm -f "$dir/pid"
    start=$(now_ms)
    PROCESS_PLUGIN_PID=$dir/pid timeout 60 bash -c \
      "'$glabench' --backend-lib '$(lib test_fork_linger)' verify --backend test_fork_linger \
       ${two[*]} --dtype fp64 $redirect | cat > '$dir/linger.out'"
    rc=$? ms=$(($(now_ms) - start))
    [[ $rc == 0 ]] || fail "fork_linger ($redirect): the pipeline ended with $rc after $ms ms: $(cat "$dir/linger.out")"
    grep -q "2 passed" "$dir/linger.out" || fail "fork_linger ($redirect): $(cat "$dir/linger.out")"
    child=$(cat "$dir/pid" 2>/dev/null)
    [[ -n "$child" ]] || fail "fork_linger: the plugin's child wrote no pid"
    ended "$child" || fail "fork_linger: the plugin's child $child outlived glabench"
    echo "ok   fork_linger ($redirect): '| cat' ended after $ms ms, the child with the run"
  done

  # glabench ended by a signal (SIGTERM: handled) or killed (SIGKILL: the workers' parent-
  # death signal) while a backend hangs: its workers, in sessions of their own, end too.
  for sig in TERM KILL; do
    "$glabench" --call-timeout 60 --backend-lib "$(lib faulty_hang)" verify --backend faulty_hang \
      "${two[@]}" --dtype fp64 > "$dir/signal.out" 2>&1 &
    parent=$!
    workers=""
    for _ in $(seq 100); do
      workers=$(pgrep -P "$parent" | tr '\n' ' ')
      [[ -n "$workers" ]] && break
      sleep 0.1
    done
    sleep 1  # the verify request is in flight
    [[ -n "$workers" ]] || fail "SIG$sig: no worker seen"
    kill -"$sig" "$parent"
    wait "$parent" 2>/dev/null
    for w in $workers; do ended "$w" || fail "SIG$sig: worker $w outlived glabench"; done
    echo "ok   SIG$sig to glabench: its workers ($workers) ended with it"
  done
  ;;

recorded)
  # chdir in the plugin, with fixtures (and the plugin) given by relative paths.
  mkdir -p "$dir/cwd/lib" && ln -s "$fixtures" "$dir/cwd/fx"
  cp "$(lib test_chdir)" "$dir/cwd/lib/" && chmod 755 "$dir/cwd" "$dir/cwd/lib" "$dir/cwd/lib/"*
  (cd "$dir/cwd" && run 60 "$glabench" --call-timeout 20 --backend-lib lib/glabench_backend_test_chdir.so \
    verify --backend test_chdir --fixture fx/gla_basic.h5 --fixture fx/gla_t1.h5 --dtype fp64 \
    --json chdir.json && echo "$rc" > rc && echo "$out" > out)
  expect "chdir rc ($(cat "$dir/cwd/out"))" "$(cat "$dir/cwd/rc")" 0
  expect "chdir" "$(statuses "$dir/cwd/chdir.json" test_chdir)" "passed passed"
  echo "ok   chdir: relative fixture paths pass"

  # Descriptors leaked until none is left.
  run 60 "$glabench" --call-timeout 20 --backend-lib "$(lib test_fd_leak)" verify \
    --backend test_fd_leak $(fx gla_basic gla_t1 gla_tiny) --dtype fp64 --json "$dir/leak.json"
  expect "fd_leak rc ($out)" "$rc" 0
  expect "fd_leak" "$(statuses "$dir/leak.json" test_fd_leak)" "passed passed passed"
  echo "ok   fd_leak: passed"

  # A worker that fails (the plugin crashes, then no longer loads in a fresh worker): the
  # cases' and configurations' failures, with the message; the run goes on and is written.
  run 60 env FAULTY_PLUGIN_MARKER="$dir/marker_verify" "$glabench" --call-timeout 20 \
    --backend-lib "$(lib faulty_reload_fails)" verify --backend faulty_reload_fails \
    --backend naive_recurrent $(fx gla_basic gla_t1 gla_tiny) --dtype fp64 --json "$dir/reload.json"
  expect "reload_fails verify rc ($out)" "$rc" 1
  expect "reload_fails verify" "$(statuses "$dir/reload.json" faulty_reload_fails)" "crashed failed failed"
  expect "reload_fails: naive" "$(statuses "$dir/reload.json" naive_recurrent)" "passed passed passed"
  [[ "$(messages "$dir/reload.json" faulty_reload_fails)" == *"worker running this case failed"*"returned NULL"* ]] ||
    fail "reload_fails verify: message: $out"
  run 120 env FAULTY_PLUGIN_MARKER="$dir/marker_bench" "$glabench" --call-timeout 20 \
    --backend-lib "$(lib faulty_reload_fails)" bench --backend faulty_reload_fails \
    --shape 1,16,1,8,8 --shape 1,32,1,8,8 --dtype fp64 --mode fwd --json "$dir/reload_bench.json"
  expect "reload_fails bench rc ($out)" "$rc" 1
  expect "reload_fails bench" "$(statuses "$dir/reload_bench.json" faulty_reload_fails)" "crashed failed"
  [[ "$(messages "$dir/reload_bench.json" faulty_reload_fails)" == *"worker running this configuration failed"*"returned NULL"* ]] ||
    fail "reload_fails bench: message: $out"
  echo "ok   reload_fails: crashed, then failed with the worker's error (verify and bench)"
  ;;

timeouts)
  # A backend that hangs in every call: two timeouts, then the rest skipped.
  run 120 "$glabench" --call-timeout 2 --backend-lib "$(lib faulty_hang)" verify \
    --backend faulty_hang --backend naive_recurrent $(fx gla_basic gla_t1 gla_tiny gla_t63) \
    --dtype fp64 --json "$dir/hang.json"
  expect "hang verify rc ($out)" "$rc" 1
  expect "hang verify" "$(statuses "$dir/hang.json" faulty_hang)" "timeout timeout skipped skipped"
  expect "hang verify: naive" "$(statuses "$dir/hang.json" naive_recurrent)" "passed passed passed passed"
  [[ "$out" == *"faulty_hang: 2 cases skipped: not run: the backend timed out in 2 cases in a row"* ]] ||
    fail "hang verify: no line for the skipped cases: $out"
  ((ms < 30000)) || fail "hang verify: $ms ms"
  echo "ok   hang verify: timeout timeout skipped skipped ($ms ms)"

  run 120 "$glabench" --call-timeout 2 --backend-lib "$(lib faulty_hang)" bench \
    --backend faulty_hang --shape 1,16,1,8,8 --shape 1,32,1,8,8 --shape 1,64,1,8,8 \
    --dtype fp64 --mode fwd --json "$dir/hang_bench.json"
  expect "hang bench rc ($out)" "$rc" 1
  expect "hang bench" "$(statuses "$dir/hang_bench.json" faulty_hang)" "timeout timeout skipped"
  [[ "$(messages "$dir/hang_bench.json" faulty_hang)" == *"timed out in 2 configurations in a row"* ]] ||
    fail "hang bench: message: $out"
  ((ms < 30000)) || fail "hang bench: $ms ms"
  echo "ok   hang bench: timeout timeout skipped ($ms ms)"

  # verify's own default limit, said in its --help and the global one.
  out=$("$glabench" verify --help)
  [[ "$out" == *"verify's default is 120 s"* ]] || fail "verify --help: $out"
  out=$("$glabench" --help)
  [[ "$out" == *"--call-timeout"*"verify's default is 120 s"* ]] || fail "glabench --help: $out"
  echo "ok   verify's default limit in --help"
  ;;

*)
  fail "no class '$class'"
  ;;
esac

echo "$failures failures"
[[ $failures == 0 ]]
