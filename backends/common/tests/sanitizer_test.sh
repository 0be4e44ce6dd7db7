#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck or synccheck) over `glabench verify` of a CUDA backend on
# the fixtures given, in every dtype they allow. Skipped (77) without a GPU or without
# compute-sanitizer. The backend's environment variables (a mode, a forced kernel
# variant) come from the test's environment.
# usage: sanitizer_test.sh TOOL GLABENCH BACKEND FIXTURE...
set -u
tool=$1 glabench=$2 backend=$3
shift 3
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$glabench" verify --backend "$backend" --dtype fp32 --fixture "$1" --no-gradcheck >/dev/null
case $? in 77) echo "no usable GPU: skipped"; exit 77 ;; esac
[[ -x $sanitizer ]] || { echo "compute-sanitizer not found: skipped"; exit 77; }
args=()
for f in "$@"; do args+=(--fixture "$f"); done
exec "$sanitizer" --tool "$tool" --error-exitcode 1 \
  "$glabench" verify --backend "$backend" --no-gradcheck "${args[@]}"
