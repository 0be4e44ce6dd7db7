#!/usr/bin/env bash
# The GPU run behind the gate-regime evidence (reports/…-regimes/), on a machine with a GPU
# and a build made elsewhere (scripts/bundle_runtime_libs.sh carries its libraries, .whl/
# the fla-core and einops wheels). In one call, bf16 at B4 T2048 H16 D128 and B2 T16384
# H16 D128 (SHAPES / PEER_SHAPES), fwd and fwdbwd, every gate regime, eager and graph:
#   - glabench bench of parallel_scan_cuda, chunked_fuse_cuda, fused_recurrent_rwkv6_cuda;
#   - fla's chunk_gla, fused_recurrent_gla, chunk_rwkv6, fused_recurrent_rwkv6
#     (scripts/peers/fla_peers.py);
#   - ring_softmax_cuda (one GPU) beside torch SDPA's flash and cuDNN kernels;
#   - glabench report over all of it (time against regime) and the peer tables.
# PHASE=warm instead runs what a fresh machine must do once: the CUDA backends' verify on
# the committed fixtures, a small bench of every CUDA backend in every regime and timing
# mode, and fla's kernels once per shape, so that Triton's autotuning (cached on disk
# between calls of one warm machine, and tarred into OUT for the next) is done before
# the timed run. Everything lands in OUT_DIR; a short summary is printed last.
# usage: [PHASE=warm|show] [TIME_CAP=0.5] scripts/gpu_regimes.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
torch_libs=$(python3 "$(dirname "$0")/torch_gpu_libs.py" 2>/dev/null)
export LD_LIBRARY_PATH=$build/runtime-libs${torch_libs:+:$torch_libs}:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/triton-cache} PYTHONUNBUFFERED=1
# Autotuning results of an earlier call (PHASE=warm's triton_autotune.tar), where carried.
[[ -f .carry/triton_autotune.tar ]] && mkdir -p "$TRITON_CACHE_DIR" && tar -C "$TRITON_CACHE_DIR" -xf .carry/triton_autotune.tar
gb=$build/glabench cap=${TIME_CAP:-0.5}
shapes=(${SHAPES:---shape 4,2048,16,128,128 --shape 2,16384,16,128,128})
peer_shapes=${PEER_SHAPES:-4,2048,16,128,128 2,16384,16,128,128}
fla_kernels=fla.chunk_gla,fla.fused_recurrent_gla,fla.chunk_rwkv6,fla.fused_recurrent_rwkv6
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
echo "glabench $(git rev-parse --short HEAD 2>/dev/null)"
step() {  # step NAME command...: runs it, logs it, says how it went
  local name=$1 t0=$SECONDS; shift
  "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s"
}

if [[ ${PHASE:-show} == warm ]]; then
  step verify_cuda "$gb" verify --backend parallel_scan_cuda --backend chunked_fuse_cuda \
    --backend fused_recurrent_rwkv6_cuda --backend ring_softmax_cuda --json "$out/verify_cuda.json"
  grep -c "FAIL" "$out/verify_cuda.log"
  step bench_small "$gb" bench --backend parallel_scan_cuda --backend chunked_fuse_cuda \
    --backend fused_recurrent_rwkv6_cuda --backend ring_softmax_cuda --shape 1,256,2,64,64 \
    --dtype bf16 --dtype fp32 --gates all --timing eager,graph --time-cap 0.05 --json "$out/bench_small.json"
  grep -vE " ok " "$out/bench_small.log" | grep -E "failed|skipped|crashed|timeout" | head -20
  step fla_autotune timeout ${WARM_TIMEOUT:-400} python3 scripts/peers/fla_peers.py --kernels $fla_kernels \
    --shapes $peer_shapes --dtypes bf16 --modes fwd,fwdbwd --gates mild --timing eager \
    --verify-tokens 64 --out "$out/fla_warm.json"
  (cd "$TRITON_CACHE_DIR" && find . -name '*.autotune.json' | tar -cf "$out/triton_autotune.tar" -T -)
  echo "autotune results: $(tar -tf "$out/triton_autotune.tar" | wc -l) files"
  exit 0
fi

step bench_ours "$gb" bench --backend parallel_scan_cuda --backend chunked_fuse_cuda \
  --backend fused_recurrent_rwkv6_cuda --op gla --op rwkv6 "${shapes[@]}" --dtype bf16 \
  --gates all --timing eager,graph --time-cap "$cap" --json "$out/ours.json"
step bench_ring "$gb" bench --backend ring_softmax_cuda --op softmax_attn "${shapes[@]}" --dtype bf16 \
  --timing eager,graph --time-cap "$cap" --json "$out/ring.json"
step sdpa python3 scripts/peers/sdpa_peers.py --each-kernel --kernels flash,cudnn --shapes $peer_shapes \
  --dtypes bf16 --modes fwd,fwdbwd --mask causal --timing eager,graph --out "$out/sdpa.json"
step fla timeout ${FLA_TIMEOUT:-400} python3 scripts/peers/fla_peers.py --kernels $fla_kernels \
  --shapes $peer_shapes --dtypes bf16 --modes fwd,fwdbwd --gates all --timing eager,graph \
  --verify-tokens 64 --out "$out/fla.json"
step report "$gb" report "$out/ours.json" "$out/fla.json" "$out/ring.json" "$out/sdpa.json" \
  --out "$out/report" --baseline fla.chunk_gla
python3 scripts/peers/peer_table.py "$out/ours.json" "$out/fla.json" > "$out/peer_table_gla.md" 2>&1
python3 scripts/peers/peer_table.py "$out/ring.json" "$out/sdpa.json" > "$out/peer_table_sdpa.md" 2>&1
tail -n 40 "$out/peer_table_gla.md"
