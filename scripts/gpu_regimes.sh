#!/usr/bin/env bash
# The GPU run behind the gate-regime evidence (reports/…-regimes/), on a machine with a GPU
# and a build made elsewhere (BUILD_DIR holds glabench, backends/, python/ and runtime-libs/;
# .whl/ the fla-core and einops wheels). bf16 at B4 T2048 H16 D128 and B2 T16384 H16 D128
# (SHAPES), fwd and fwdbwd, every gate regime, eager and graph, one `glabench bench` per op
# (OPS, in this order), each timing ours and the peers (Python backends, docs/python.md)
# in the same run, into OUT_DIR/<op>.json:
#   gla           parallel_scan_cuda, chunked_fuse_cuda; fla.chunk_gla, fla.fused_recurrent_gla
#   rwkv6         fused_recurrent_rwkv6_cuda, chunked_fuse_cuda; fla.chunk_rwkv6,
#                 fla.fused_recurrent_rwkv6
#   softmax_attn  ring_softmax_cuda (one GPU, causal); torch.sdpa.flash, torch.sdpa.cudnn
# then glabench report over them (time against regime) and a peer table per op
# (scripts/peer_table.py). Each bench gets what is left of BUDGET_S, less 25 s for the
# report; one cut short keeps the rows it finished (context.incomplete), so split a large
# run over calls (OPS, SHAPES). fla's first call of each dtype, mode and shape compiles and
# autotunes Triton kernels (its choices are kept per shape: python/glabench/
# autotune_scope.py; minutes a kernel, 1–3 minutes a shape on an H200; compiled kernels
# stay in ~/.triton/cache, so a second call on the same warm machine only autotunes). Samples stop at TIME_CAP seconds
# (--time-cap). OURS=0 leaves our backends out; FLA lists the fla kernels and SDPA the SDPA
# kernels (empty: none); TIMING the timing modes. A call with OURS=0 and a small TIME_CAP
# warms a machine for the next.
# usage: [TIME_CAP=0.3] [BUDGET_S=540] [OPS="gla rwkv6 softmax_attn"] [OURS=1]
#        [FLA="fla.chunk_gla …"] [SDPA="flash cudnn"] [TIMING=eager,graph] [MAX_CALL_S=3600]
#        scripts/gpu_regimes.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
start=$SECONDS budget=${BUDGET_S:-540}
. "$(dirname "$0")/gpu_runtime_env.sh" "$build"
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import fla' 2>/dev/null || python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
gb=$build/glabench cap=${TIME_CAP:-0.3} timing=${TIMING:-eager,graph}
shapes=(${SHAPES:---shape 4,2048,16,128,128 --shape 2,16384,16,128,128})
fla=${FLA-fla.chunk_gla fla.fused_recurrent_rwkv6 fla.chunk_rwkv6 fla.fused_recurrent_gla}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
step() {  # step NAME command...: runs it, logs it, says how it went
  local name=$1 t0=$SECONDS; shift
  "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s"
}
left() { echo $((budget - (SECONDS - start))); }
ours_of() {
  case $1 in
    gla) echo parallel_scan_cuda chunked_fuse_cuda ;;
    rwkv6) echo fused_recurrent_rwkv6_cuda chunked_fuse_cuda ;;
    softmax_attn) echo ring_softmax_cuda ;;
  esac
}

# fla's first call compiles and autotunes, and bench predicts a larger shape's call from
# it: --max-call-seconds 3600 keeps that from skipping the larger shape; --call-timeout
# (600 s) still stops a stuck call.
for op in ${OPS:-gla rwkv6 softmax_attn}; do
  python=() backends=() gates=()
  if [[ ${OURS:-1} == 1 ]]; then for b in $(ours_of "$op"); do backends+=(--backend "$b"); done; fi
  if [[ $op == softmax_attn ]]; then
    for k in ${SDPA-flash cudnn}; do
      python+=(--python "torch.sdpa.$k=glabench.sdpa:$k") backends+=(--backend "torch.sdpa.$k")
    done
  else
    gates=(--gates all)
    for k in $fla; do
      [[ $k == *_"$op" ]] && python+=(--python "$k=glabench.fla:${k#fla.}") backends+=(--backend "$k")
    done
  fi
  (( ${#backends[@]} )) || continue
  (( $(left) > 30 )) || { echo "bench_$op: not run, the call's time is spent"; continue; }
  step "bench_$op" timeout $(( $(left) - 25 )) "$gb" "${python[@]}" bench "${backends[@]}" --op "$op" \
    "${shapes[@]}" --dtype bf16 "${gates[@]}" --timing "$timing" --time-cap "$cap" \
    --max-call-seconds "${MAX_CALL_S:-3600}" --json "$out/$op.json"
done
results=$(ls "$out"/gla.json "$out"/rwkv6.json "$out"/softmax_attn.json 2>/dev/null)
[[ -n $results ]] && step report timeout 60 "$gb" report $results --out "$out/report" --baseline fla.chunk_gla
for f in $results; do
  python3 "$(dirname "$0")/peer_table.py" "$f" > "$out/peer_table_$(basename "$f" .json).md" 2>&1
done
echo "done in $((SECONDS - start)) s"
