"""Ground truth for kerncast's occupancy model, measured on a real GPU.

Builds kernels whose register counts span 16..255 (ptxas --maxrregcount on a kernel
with many live accumulators), reads each count back with cuFuncGetAttribute, and asks
the driver's occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor, which
cudaOccupancyMaxActiveBlocksPerMultiprocessor calls) for the resident blocks at every
block size and dynamic shared-memory size of the grid below. Writes a CSV with the
driver version and the date on every row.

Run on a machine with an NVIDIA GPU, nvcc and cuda-python:
    python tools/occupancy_truth.py --out occupancy_h100.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import subprocess
import tempfile
from pathlib import Path

from cuda.bindings import driver as cu

BLOCKS = [32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024]
SMEM_KIB = [0, 1, 4, 12, 24, 48, 100, 160, 227]
# (accumulators, --maxrregcount or 0 for none): chosen to give distinct register counts,
# odd ones included, so the allocation granularity is exercised.
BUILDS = [(8, 0), (256, 24), (256, 25), (256, 29), (256, 32), (256, 33), (256, 37),
          (256, 40), (256, 48), (256, 56), (256, 63), (256, 64), (256, 65), (256, 72),
          (256, 80), (256, 85), (256, 96), (256, 127), (256, 128), (256, 129), (256, 168),
          (256, 200), (256, 232), (256, 254), (256, 255)]
SOURCE = Path(__file__).with_name("occupancy_kernel.cu")


def check(result):
    err, *rest = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err}")
    return rest[0] if len(rest) == 1 else rest


def build(tmp: Path, nacc: int, maxreg: int, arch: str) -> Path:
    ptx = tmp / f"k{nacc}.ptx"
    if not ptx.exists():
        subprocess.run(["nvcc", "-ptx", f"-arch={arch}", f"-DNACC={nacc}", str(SOURCE),
                        "-o", str(ptx)], check=True)
    cubin = tmp / f"k{nacc}_{maxreg}.cubin"
    cmd = ["ptxas", f"-arch={arch}", str(ptx), "-o", str(cubin)]
    if maxreg:
        cmd[1:1] = ["--maxrregcount", str(maxreg)]
    subprocess.run(cmd, check=True)
    return cubin


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    name = check(cu.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
    major = check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    optin = check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev))
    driver = check(cu.cuDriverGetVersion())
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    arch = f"sm_{major}{minor}"
    today = dt.date.today().isoformat()
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for nacc, maxreg in BUILDS:
            cubin = build(Path(tmpdir), nacc, maxreg, arch)
            module = check(cu.cuModuleLoadData(cubin.read_bytes()))
            func = check(cu.cuModuleGetFunction(module, b"pressure"))
            attr = cu.CUfunction_attribute
            regs = check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_NUM_REGS, func))
            static = check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func))
            check(cu.cuFuncSetAttribute(
                func, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - static))
            for block in BLOCKS:
                for kib in SMEM_KIB:
                    dyn = kib * 1024
                    err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, block, dyn)
                    rows.append({
                        "device": name, "compute_capability": f"{major}.{minor}",
                        "registers": regs, "maxrregcount": maxreg, "static_shared": static,
                        "block": block, "dynamic_shared": dyn,
                        "blocks_per_sm": int(blocks) if err == cu.CUresult.CUDA_SUCCESS else -1,
                        "status": str(err).split(".")[-1].rstrip(">"),
                        "driver": smi, "cuda_driver_api": driver, "date": today,
                        "api": "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    })
            check(cu.cuModuleUnload(module))
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} rows, {len({r['registers'] for r in rows})} register counts -> {args.out}")


if __name__ == "__main__":
    main()
