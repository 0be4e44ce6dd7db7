#!/usr/bin/env bash
# A fixture written by h5py + numpy (scripts/write_h5py_fixture.py) loads and verifies
# against the naive backend. Skipped (77) where Python lacks h5py or numpy.
set -eu
glabench=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
python3 -c 'import h5py, numpy' 2>/dev/null || { echo "python3 with h5py and numpy not found: skipped"; exit 77; }
mkdir -p "$out"
python3 "$here/../../scripts/write_h5py_fixture.py" "$out/gla_h5py.h5"
"$glabench" fixtures show "$out/gla_h5py.h5"
"$glabench" verify --backend naive_recurrent --fixture "$out/gla_h5py.h5" --json "$out/results.json"
