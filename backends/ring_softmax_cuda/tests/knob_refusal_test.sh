#!/usr/bin/env bash
# A knob value outside its set is refused, naming the variable: `glabench verify` of the
# ring backend (with the knob in the environment) must print "NAME must be". Skipped
# (77) without a GPU, where the backend is never asked.
# usage: knob_refusal_test.sh GLABENCH FIXTURE NAME
set -u
glabench=$1 fixture=$2 name=$3
out=$("$glabench" verify --backend ring_softmax_cuda --fixture "$fixture" 2>&1)
rc=$?
echo "$out"
if grep -q "$name must be" <<<"$out"; then exit 0; fi
if (( rc == 77 )) && ! nvidia-smi -L >/dev/null 2>&1; then echo "no GPU: skipped"; exit 77; fi
echo "FAIL: no \"$name must be\" in the output (exit $rc)"
exit 1
