# Sourced by the GPU scripts: a carried build's runtime environment on a GPU machine.
# Exports LD_LIBRARY_PATH (the build's runtime-libs/ from bundle_runtime_libs.sh, then
# torch's cuDNN, CUDA runtime and NCCL from torch_gpu_libs.py, then the CUDA toolkit's),
# GLABENCH_BACKEND_PATH (the build's plugins, unless set), NCCL_NVLS_ENABLE=0 and
# TRITON_CACHE_AUTOTUNING=1; leaves
# torch_libs (empty where torch has none) for the caller to report.
# usage: . scripts/gpu_runtime_env.sh BUILD_DIR
export NCCL_NVLS_ENABLE=0
# Triton's autotuning results on disk beside its kernels (scripts/triton_cache.sh carries them).
export TRITON_CACHE_AUTOTUNING=1
torch_libs=$(python3 "$(dirname "${BASH_SOURCE[0]}")/torch_gpu_libs.py" 2>/dev/null)
export LD_LIBRARY_PATH=$1/runtime-libs${torch_libs:+:$torch_libs}:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GLABENCH_BACKEND_PATH=${GLABENCH_BACKEND_PATH:-$1/backends}
