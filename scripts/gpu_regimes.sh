#!/usr/bin/env bash
# The GPU run behind the gate-regime evidence (reports/…-regimes/), on a machine with a GPU
# and a build made elsewhere (BUILD_DIR holds glabench, backends/ and runtime-libs/; .whl/
# the fla-core and einops wheels). In one call, bf16 at B4 T2048 H16 D128 and B2 T16384
# H16 D128 (SHAPES / PEER_SHAPES), fwd and fwdbwd, every gate regime, eager and graph:
#   1. glabench bench of parallel_scan_cuda, chunked_fuse_cuda, fused_recurrent_rwkv6_cuda;
#   2. ring_softmax_cuda (one GPU) and torch SDPA's flash and cuDNN kernels;
#   3. fla's chunk_gla, fused_recurrent_rwkv6, chunk_rwkv6, fused_recurrent_gla
#      (scripts/peers/fla_peers.py), in that order, in what time is left of BUDGET_S;
#      Triton autotunes each new shape (minutes a kernel; its results stay in
#      ~/.triton/cache, so a second call on the same warm machine skips it), and the file
#      is rewritten after every row, so what is cut short keeps what it timed;
#   4. glabench report over all of it (time against regime) and the peer tables.
# Samples stop at TIME_CAP seconds (glabench's --time-cap and the peers' alike).
# Everything lands in OUT_DIR; a short summary is printed last. OURS=0 and SDPA=0 leave
# out steps 1 and 2; FLA lists the fla kernels of step 3; TIMING the timing modes. A call
# with OURS=0 SDPA=0 and a small TIME_CAP warms a machine for the next: Triton's compiled
# kernels stay on disk, and autotuning then only times them.
# usage: [TIME_CAP=0.3] [BUDGET_S=540] [OURS=1] [SDPA=1] [FLA="fla.chunk_gla …"]
#        [TIMING=eager,graph] scripts/gpu_regimes.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
start=$SECONDS budget=${BUDGET_S:-540}
torch_libs=$(python3 "$(dirname "$0")/torch_gpu_libs.py" 2>/dev/null)
export LD_LIBRARY_PATH=$build/runtime-libs${torch_libs:+:$torch_libs}:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import fla' 2>/dev/null || python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 GLABENCH_PEER_TIME_CAP=${TIME_CAP:-0.3}
gb=$build/glabench cap=${TIME_CAP:-0.3} timing=${TIMING:-eager,graph}
shapes=(${SHAPES:---shape 4,2048,16,128,128 --shape 2,16384,16,128,128})
peer_shapes=${PEER_SHAPES:-4,2048,16,128,128 2,16384,16,128,128}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
step() {  # step NAME command...: runs it, logs it, says how it went
  local name=$1 t0=$SECONDS; shift
  "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s"
}
left() { echo $((budget - (SECONDS - start))); }

[[ ${OURS:-1} == 1 ]] && step bench_ours "$gb" bench --backend parallel_scan_cuda --backend chunked_fuse_cuda \
  --backend fused_recurrent_rwkv6_cuda --op gla --op rwkv6 "${shapes[@]}" --dtype bf16 \
  --gates all --timing "$timing" --time-cap "$cap" --json "$out/ours.json"
[[ ${SDPA:-1} == 1 ]] && step bench_ring "$gb" bench --backend ring_softmax_cuda --op softmax_attn "${shapes[@]}" --dtype bf16 \
  --timing "$timing" --time-cap "$cap" --json "$out/ring.json"
[[ ${SDPA:-1} == 1 ]] && step sdpa timeout 90 python3 scripts/peers/sdpa_peers.py --each-kernel --kernels flash,cudnn \
  --shapes $peer_shapes --dtypes bf16 --modes fwd,fwdbwd --mask causal --timing "$timing" \
  --out "$out/sdpa.json"
for kernel in ${FLA:-fla.chunk_gla fla.fused_recurrent_rwkv6 fla.chunk_rwkv6 fla.fused_recurrent_gla}; do
  (( $(left) > 30 )) || { echo "$kernel: not run, the call's time is spent"; continue; }
  step "${kernel#fla.}" timeout $(( $(left) - 25 )) python3 scripts/peers/fla_peers.py --kernels $kernel \
    --shapes $peer_shapes --dtypes bf16 --modes fwd,fwdbwd --gates all --timing "$timing" \
    --verify-tokens 64 --out "$out/${kernel#fla.}.json"
done
peers=$(ls "$out"/chunk_*.json "$out"/fused_*.json 2>/dev/null)
step report timeout 60 "$gb" report "$out/ours.json" $peers "$out/ring.json" "$out/sdpa.json" \
  --out "$out/report" --baseline fla.chunk_gla
python3 scripts/peers/peer_table.py "$out/ours.json" $peers > "$out/peer_table_gla.md" 2>&1
python3 scripts/peers/peer_table.py "$out/ring.json" "$out/sdpa.json" > "$out/peer_table_sdpa.md" 2>&1
echo "done in $((SECONDS - start)) s"
