#!/usr/bin/env bash
# Triton's on-disk cache across lent GPU machines, which start bare: `restore FILE` unpacks
# a cache saved by an earlier call into TRITON_CACHE_DIR (default ~/.triton/cache), `save
# FILE` packs it (xz) for the next call or session to carry. With TRITON_CACHE_AUTOTUNING=1
# (gpu_runtime_env.sh and gpu_chunked.sh export it) the cache also holds each
# @triton.autotune kernel's chosen configuration per key, so a carried cache spares fla's
# minutes of autotuning at a shape it has met: the configuration its own autotuning chose,
# on the same GPU model. Through glabench's bridge the key names the problem's shape too
# (python/glabench/autotune_scope.py), so a choice made at one shape is never restored at
# another. A missing FILE restores nothing. `save-tuning FILE` packs only the choices (the
# `*.autotune.json` files, kilobytes where the compiled kernels take tens of megabytes, more
# than a call may bring back): restored, Triton skips the tuning and compiles the chosen
# configuration alone.
# usage: scripts/triton_cache.sh restore|save|save-tuning FILE
set -euo pipefail
usage="usage: triton_cache.sh restore|save|save-tuning FILE"
what=${1:?$usage} file=${2:?$usage}
dir=${TRITON_CACHE_DIR:-$HOME/.triton/cache}
case $what in
  restore)
    [[ -f $file ]] || { echo "triton_cache: no $file, nothing restored"; exit 0; }
    mkdir -p "$dir" && tar -C "$dir" -xJf "$file"
    echo "triton_cache: $(find "$dir" -type f | wc -l) files restored into $dir" ;;
  save)
    [[ -d $dir ]] || { echo "triton_cache: no $dir, nothing saved"; exit 0; }
    tar -C "$dir" -cJf "$file" . && echo "triton_cache: $dir saved to $file ($(du -h "$file" | cut -f1))" ;;
  save-tuning)
    [[ -d $dir ]] || { echo "triton_cache: no $dir, nothing saved"; exit 0; }
    list=$(mktemp) && trap 'rm -f "$list"' EXIT
    (cd "$dir" && find . -type f -name '*.autotune.json' | sort) > "$list"
    tar -C "$dir" -cJf "$file" -T "$list"
    echo "triton_cache: $(wc -l < "$list") tuning choices from $dir saved to $file ($(du -h "$file" | cut -f1))" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
