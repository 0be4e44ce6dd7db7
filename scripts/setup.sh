#!/usr/bin/env bash
# Installs what glabench needs to build and test on Debian/Ubuntu, skipping what is
# already there: compilers and CMake, HDF5, Boost.Test, Google Benchmark, CLI11,
# nlohmann-json, fmt, DLPack, a shared libpython, Open MPI's mpirun (the test of NCCL's id
# by MPI's rendezvous; glabench loads libmpi only under a launcher), clang-format 14, and
# Python's numpy, h5py and matplotlib (the h5py fixture test, the plots) and torch (the
# Python bridge's tests). The CUDA toolkit is optional and never installed here:
# when nvcc is on PATH (or at /usr/local/cuda/bin) the CUDA backends build too, and the
# cudnn-frontend headers (pip's nvidia-cudnn-frontend) are installed for
# ring_softmax_cuda's cuDNN blocks.
set -euo pipefail

debian_packages=(build-essential cmake git pkg-config python3 python3-pip clang
  libhdf5-dev libboost-test-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev libdlpack-dev
  libpython3-dev openmpi-bin)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# clang-format 14, the version the ctest `format` holds the tree to (other majors format
# some constructs differently; the test skips where 14 is missing).
if ! command -v clang-format-14 >/dev/null &&
  ! { command -v clang-format >/dev/null && clang-format --version | grep -q "version 14\."; }; then
  echo "setup: installing clang-format-14 (the ctest format)"
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    clang-format-14 >/dev/null 2>&1 || echo "setup: no clang-format-14; the format test will skip"
fi

# libFuzzer (scripts/fuzz.sh) is in clang's runtime package, separate on newer Debian.
probe=$(mktemp -d)
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  >"$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
  clang_major=$(clang++ -dumpversion 2>/dev/null | cut -d. -f1)
  echo "setup: installing clang's runtime libraries (libFuzzer)"
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    libclang-rt-dev >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      "libclang-rt-$clang_major-dev" >/dev/null 2>&1 ||
    echo "setup: could not install libFuzzer; scripts/fuzz.sh will skip the fuzz tests"
fi
rm -rf "$probe"

if ! python3 -c 'import numpy, h5py, matplotlib' 2>/dev/null; then
  echo "setup: installing numpy, h5py and matplotlib for python3"
  python3 -m pip install --quiet numpy h5py matplotlib 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages numpy h5py matplotlib ||
    echo "setup: could not install the Python packages; the h5py fixture test will be skipped"
fi

# torch, for the Python bridge's tests (backends/python_bridge/tests: pure-PyTorch kernels
# on the CPU). PyPI's wheel is the one there is; it runs on machines without a GPU.
if ! python3 -c 'import torch' 2>/dev/null; then
  echo "setup: installing torch for the Python bridge's tests (a few minutes)"
  python3 -m pip install --quiet torch 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages torch ||
    echo "setup: could not install torch; the python_bridge tests will fail"
fi

if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  purelib=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  if [[ ! -f $purelib/include/cudnn_frontend.h ]]; then
    echo "setup: installing the cudnn-frontend headers (nvidia-cudnn-frontend) for ring_softmax_cuda"
    python3 -m pip install --quiet --no-deps nvidia-cudnn-frontend==1.32.0 2>/dev/null ||
      python3 -m pip install --quiet --no-deps --break-system-packages nvidia-cudnn-frontend==1.32.0 ||
      echo "setup: no cudnn-frontend; ring_softmax_cuda's bf16 blocks will use its own kernel"
  fi
fi
