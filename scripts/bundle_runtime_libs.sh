#!/usr/bin/env bash
# Copies the shared libraries a build's binaries need, other than glibc and the C++
# runtime, into BUILD/runtime-libs, so the build can run on a machine that lacks our
# Debian packages (the lent GPU machines): run there with
#   LD_LIBRARY_PATH=BUILD/runtime-libs
# usage: scripts/bundle_runtime_libs.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bundle_runtime_libs.sh BUILD_DIR}
dest=$build/runtime-libs
mkdir -p "$dest"
mapfile -t binaries < <(find "$build" -type f \( -name '*.so' -o -perm -u+x \) ! -path "$dest/*" ! -name '*.sh' |
  while read -r f; do file -b "$f" | grep -q ELF && echo "$f"; done)
# ldd exits non-zero when one file is not dynamic; the others' lists still count.
{ ldd "${binaries[@]}" 2>/dev/null || true; } | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" "$dest/"; done
du -sh "$dest"
