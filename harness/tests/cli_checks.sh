# Sourced by the cli_*_test.sh scripts: count failures and check exit codes.
#   fail DESCRIPTION                       record one failure
#   expect_rc WANT DESCRIPTION command...  run command; $out holds its output, $rc its
#                                          exit code; a code other than WANT is a failure
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
expect_rc() {
  local want=$1 what=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  [[ $rc == "$want" ]] || fail "$what: exit $rc, expected $want: $out"
}
