#!/usr/bin/env bash
# usage: scripts/sass_diff.sh OLD_BUILD_DIR NEW_BUILD_DIR
#
# Compares the device code (SASS) of every backend plugin, backends/*.so, built in both
# build directories, kernel by kernel: each plugin's cubins are extracted with
# `cuobjdump -xelf all`, disassembled with `cuobjdump -sass` and split at the
# `Function :` headers. Prints IDENTICAL or DIFFERENT (with the count of differing SASS
# lines) per kernel, then
#   N kernels, M identical, K different, only-in-old X, only-in-new Y
# and exits 0 only when every kernel is identical and both builds have the same kernels.
#
# Why: a refactor that moves only host code (launch configuration, dispatch, file
# layout) must leave the device code unchanged, so that the GPU timings and accuracy
# figures measured before it still describe the kernels after it. Branch targets and
# addresses in the SASS are relative to each function, so identical kernels give
# identical text wherever the linker placed them; nothing is normalised.
set -euo pipefail
export LC_ALL=C  # one collation for sort and join

if [[ $# -ne 2 || ! -d $1 || ! -d $2 ]]; then
  echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR" >&2
  exit 2
fi
# cuobjdump: $CUOBJDUMP, else on PATH, else the CUDA toolkit's (where a toolkit lacks it, the
# PyPI package nvidia-cuda-cuobjdump has it).
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo "${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump")}
if [[ ! -x $cuobjdump ]]; then
  echo "$0: cuobjdump not found (set CUOBJDUMP)" >&2
  exit 2
fi
old_dir=$(cd "$1" && pwd)
new_dir=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Splits the SASS of every cubin in plugin $1 into $2/<n>.sass, one file per kernel, and
# writes $2/index: "<md5 of the kernel's SASS> <kernel name>" per line, sorted by name.
split_kernels() {
  local plugin=$1 out=$2
  mkdir -p "$out/cubins"
  # A plugin without device code (a CPU backend) has no cubins and no kernels.
  (cd "$out/cubins" && "$cuobjdump" -xelf all "$plugin" > /dev/null 2>&1) || true
  local cubin
  for cubin in "$out"/cubins/*.cubin; do
    [[ -e $cubin ]] || continue
    "$cuobjdump" -sass "$cubin"
  done | awk -v out="$out" '
    /^[[:space:]]*Function : / {
      if (file) close(file)
      name = $0
      sub(/^[[:space:]]*Function : /, "", name)
      seen[name]++
      if (seen[name] > 1) name = name "#" seen[name]  # the same kernel in two cubins
      file = out "/" ++n ".sass"
      print n, name > (out "/names")
      next
    }
    /^[[:space:]]*code for / { if (file) close(file); file = ""; next }  # the next cubin
    /^[[:space:]]*\.+$/ || /^[[:space:]]*$/ { next }  # separators between functions
    file { print > file }
  '
  : > "$out/index"
  [[ -e $out/names ]] || return 0
  local n name
  while read -r n name; do
    echo "$(md5sum < "$out/$n.sass" | cut -d' ' -f1) $name $n"
  done < "$out/names" | sort -k2,2 > "$out/index"
}

total=0 identical=0 different=0 only_old=0 only_new=0
shopt -s nullglob
for old_plugin in "$old_dir"/backends/*.so; do
  plugin=$(basename "$old_plugin")
  new_plugin=$new_dir/backends/$plugin
  [[ -e $new_plugin ]] || continue
  echo "== $plugin"
  split_kernels "$old_plugin" "$work/$plugin/old"
  split_kernels "$new_plugin" "$work/$plugin/new"
  # Fields: name, then old and new "md5 n" (empty where the build lacks the kernel).
  while read -r name old_md5 old_n new_md5 new_n; do
    total=$((total + 1))
    if [[ $old_md5 == - ]]; then
      only_new=$((only_new + 1))
      echo "ONLY-IN-NEW $name"
    elif [[ $new_md5 == - ]]; then
      only_old=$((only_old + 1))
      echo "ONLY-IN-OLD $name"
    elif [[ $old_md5 == "$new_md5" ]]; then
      identical=$((identical + 1))
      echo "IDENTICAL   $name"
    else
      different=$((different + 1))
      lines=$(diff "$work/$plugin/old/$old_n.sass" "$work/$plugin/new/$new_n.sass" | grep -c '^[<>]' || true)
      echo "DIFFERENT   $name ($lines SASS lines differ)"
    fi
  done < <(join -1 2 -2 2 -a 1 -a 2 -e - -o 0,1.1,1.3,2.1,2.3 \
             "$work/$plugin/old/index" "$work/$plugin/new/index")
done

echo "$total kernels, $identical identical, $different different, only-in-old $only_old, only-in-new $only_new"
[[ $total -gt 0 && $different -eq 0 && $only_old -eq 0 && $only_new -eq 0 ]]
