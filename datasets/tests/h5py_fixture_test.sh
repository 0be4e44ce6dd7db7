#!/usr/bin/env bash
# A fixture written by h5py + numpy (scripts/write_h5py_fixture.py) loads and verifies
# against the naive backend; a packed batch written so (schema version 2) loads. Skipped
# (77) where Python lacks h5py or numpy.
set -eu
glabench=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
python3 -c 'import h5py, numpy' 2>/dev/null || { echo "python3 with h5py and numpy not found: skipped"; exit 77; }
mkdir -p "$out"
python3 "$here/../../scripts/write_h5py_fixture.py" "$out/gla_h5py.h5"
"$glabench" fixtures show "$out/gla_h5py.h5"
"$glabench" verify --backend naive_recurrent --fixture "$out/gla_h5py.h5" --json "$out/results.json"

# A packed variable-length batch (schema version 2, int32 cu_seqlens as numpy writes it)
# is read and validated: three sequences, a state each.
python3 "$here/../../scripts/write_h5py_fixture.py" --varlen "$out/gla_h5py_varlen.h5"
"$glabench" fixtures show "$out/gla_h5py_varlen.h5" | tee "$out/varlen_show.txt"
grep -q "^  cu_seqlens: 3 sequences, of 1 6 4 tokens$" "$out/varlen_show.txt"
grep -Eq "^  /inputs/h0 +\[3, 2, 5, 3\] " "$out/varlen_show.txt"
grep -Eq "^  /expected/ht +\[3, 2, 5, 3\] " "$out/varlen_show.txt"
