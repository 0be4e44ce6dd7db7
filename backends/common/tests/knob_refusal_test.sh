#!/usr/bin/env bash
# A knob value outside its set is refused, naming the variable: `glabench verify` of the
# backend (with the knob in the environment) must print "NAME must be". Skipped (77)
# without a GPU, where the backend is never asked. (A plain verify with
# PASS_REGULAR_EXPRESSION would not do: verify exits 77 when every case is refused, and
# CTest then reports the test skipped.)
# usage: knob_refusal_test.sh GLABENCH BACKEND FIXTURE NAME
set -u
glabench=$1 backend=$2 fixture=$3 name=$4
out=$("$glabench" verify --backend "$backend" --fixture "$fixture" 2>&1)
rc=$?
echo "$out"
if grep -q "$name must be" <<<"$out"; then exit 0; fi
if (( rc == 77 )) && ! nvidia-smi -L >/dev/null 2>&1; then echo "no GPU: skipped"; exit 77; fi
echo "FAIL: no \"$name must be\" in the output (exit $rc)"
exit 1
