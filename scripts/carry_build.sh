#!/usr/bin/env bash
# Copies what a build needs to run its tests and benchmarks — binaries, plugins,
# CTest files, runtime-libs/ from bundle_runtime_libs.sh — without object files and
# CMake's own caches, into DEST (gitignored .carry/ suits the lent GPU machines, which
# take at most 64 MiB of working tree). There, link it back to the build's path:
#   mkdir -p build && ln -sfn "$PWD/DEST" build/hopper
# (CTest files name absolute paths, so the checkout must sit at the same path.)
# usage: scripts/carry_build.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?usage: carry_build.sh BUILD_DIR DEST} dest=${2:?usage: carry_build.sh BUILD_DIR DEST}
rm -rf "$dest" && mkdir -p "$dest"
tar -C "$build" -cf - --exclude=CMakeFiles --exclude='*.a' --exclude='*.o' . | tar -C "$dest" -xf -
du -sh "$dest"
