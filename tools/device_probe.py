"""Dump what the CUDA driver, NVML and the installed tools report about GPU 0 (JSON).

Used to fill and check device specs and to stamp measurement provenance:
    python tools/device_probe.py > probe.json
"""

from __future__ import annotations

import json
import shutil
import subprocess

from cuda.bindings import driver as cu


def main() -> None:
    cu.cuInit(0)
    _, dev = cu.cuDeviceGet(0)
    out: dict = {}
    _, name = cu.cuDeviceGetName(256, dev)
    out["name"] = name.split(b"\0")[0].decode()
    attrs = {}
    for attr in cu.CUdevice_attribute:
        err, value = cu.cuDeviceGetAttribute(attr, dev)
        if err == cu.CUresult.CUDA_SUCCESS:
            attrs[attr.name.replace("CU_DEVICE_ATTRIBUTE_", "").lower()] = value
    out["attributes"] = attrs
    _, total = cu.cuDeviceTotalMem(dev)
    out["total_memory_bytes"] = int(total)
    out["driver_api_version"] = cu.cuDriverGetVersion()[1]
    query = ("name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,"
             "power.limit,power.draw,temperature.gpu,pstate,compute_mode,persistence_mode")
    smi = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"],
                         capture_output=True, text=True)
    out["nvidia_smi"] = smi.stdout
    tools = {}
    for tool in ("nvcc", "ncu", "ptxas", "cuobjdump"):
        path = shutil.which(tool)
        if path:
            ver = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
            tools[tool] = {"path": path, "version": ver.strip().splitlines()[-1] if ver else ""}
    out["tools"] = tools
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
