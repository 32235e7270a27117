#!/usr/bin/env bash
# A campaign on every GPU of a lent machine against the same campaign on one GPU
# (docs/MEASURING.md, "Several GPUs"). The kernels are split in two halves, A and B:
#   1. half A on GPU 0 alone             -> $OUT/one-gpu.json (rows per second)
#   2. half A on all GPUs (--gpus all)   -> $OUT/all-gpus.json; its rows are compared with 1.
#   3. half B on all GPUs                -> the rest of the dataset
# The dataset of all GPUs (steps 2 and 3) comes back in $OUT/NAME, the rows of step 1 in
# $OUT/one-gpu-times.parquet.
#   tools/multi_gpu_campaign.sh SECONDS_ONE SECONDS_ALL_A SECONDS_ALL_B -- ARGS...
#   (ARGS go to every kerncast measure corpus call; --kernels is set here; A_KERNELS=N
#   makes half A the first N kernels; SECONDS_ALL_B 0 skips step 3; FRESH=1 starts both
#   from an empty dataset, so that items already in data/<device> are measured again:
#   a comparison on items of any kind, whose rows are not for the shipped dataset)
set -uo pipefail
one_s=$1; all_a=$2; all_b=$3; shift 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl >/dev/null 2>&1 || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)" in
  *H200*) name=h200 ;; *H100*) name=h100 ;; *) echo "unknown GPU"; exit 1 ;;
esac
nvidia-smi -L
mapfile -t kernels < <(python3 -m kerncast corpus list --json | python3 -c \
  'import json,sys; print("\n".join(sorted(k["name"] for k in json.load(sys.stdin)["kernels"])))')
half=${A_KERNELS:-$(( ${#kernels[@]} / 2 ))}
a=$(IFS=,; echo "${kernels[*]:0:$half}"); b=$(IFS=,; echo "${kernels[*]:$half}")
mkdir -p /tmp/one /tmp/all "$OUT/$name"
if [ "${FRESH:-0}" != 1 ]; then cp -r "data/$name/." /tmp/one/; cp -r "data/$name/." /tmp/all/; fi
run() {  # OUTDIR SECONDS KERNELS LOG [extra args]
  local out=$1 secs=$2 ks=$3 log=$4; shift 4
  python3 -m kerncast measure corpus --device "$name" --out "$out" --deadline "$secs" \
    --kernels "$ks" --json "$@" > "$OUT/$log" 2> "/tmp/$log.err"
  echo "$log: exit $? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d.get(k) for k in ("measured","remaining","elapsed_s","statuses","notes")})' "$OUT/$log" 2>&1)"
  tail -3 "/tmp/$log.err"
}
CUDA_VISIBLE_DEVICES=0 run /tmp/one "$one_s" "$a" one-gpu.json "$@"
run /tmp/all "$all_a" "$a" all-gpus.json --gpus all "$@"
[ "$all_b" != 0 ] && run /tmp/all "$all_b" "$b" all-gpus-b.json --gpus all "$@"
python3 -m kerncast data compact /tmp/all >/dev/null 2>&1
python3 -m kerncast data compact /tmp/one >/dev/null 2>&1
cp /tmp/one/times.parquet "$OUT/one-gpu-times.parquet"
for f in times.parquet campaign.json; do cp "/tmp/all/$f" "$OUT/$name/"; done
ls -la "$OUT" "$OUT/$name"
