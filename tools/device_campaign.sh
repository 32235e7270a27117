#!/usr/bin/env bash
# One call of a measurement campaign on a lent GPU machine (see docs/MEASURING.md).
#   tools/device_campaign.sh DEVICE DEADLINE_S -- ARGS...   (ARGS go to kerncast measure corpus)
#   DEADLINE_S is when the campaign stops: it starts no item after DEADLINE_S less a reserve
#   (5-30 s) and kills the one still running halfway through the reserve, so an item must
#   fit inside DEADLINE_S.
#   DATASET=NAME names the dataset directory when it differs from DEVICE (e.g. a PoCL CPU).
# Installs the carried wheels, continues the dataset data/NAME in $OUT/NAME, runs the
# campaign until DEADLINE_S, compacts the part files into one Parquet file per table and
# removes the parts, so that what comes back from $OUT is the whole dataset.
set -uo pipefail
device=$1; deadline=$2; shift 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl >/dev/null 2>&1 || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
mkdir -p /tmp/icd; echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
name=${DATASET:-$device}
out=$OUT/$name
mkdir -p "$out"
# continue from the dataset in the tree unless an earlier run of this call left a newer one
if [ -d "data/$name" ]; then cp -rn "data/$name/." "$out/"; fi
start=$(date +%s)
python3 -m kerncast measure corpus --device "$device" --out "$out" --deadline "$deadline" \
  --json "$@" > "/tmp/campaign-$start.json" 2> "/tmp/campaign-$start.log"
echo "campaign exit $? after $(( $(date +%s) - start )) s"
python3 -m kerncast data compact "$out" >/dev/null 2>&1
rm -rf "$out/parts" "$out"/.*.tmp "$out/ncu_metrics.json"   # at most 8 files come back
python3 - "/tmp/campaign-$start.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print({k: d.get(k) for k in ("rows", "statuses", "remaining", "stopped_by_deadline", "elapsed_s")})
except Exception as e:
    print("no campaign summary:", e)
PY
tail -5 "/tmp/campaign-$start.log"
ls -la "$out"
