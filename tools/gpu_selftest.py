"""Check kerncast's CUDA measurement paths on a real GPU, in one short call (< 2 minutes).

    PYTHONPATH=src python3 tools/gpu_selftest.py $OUT/selftest.json

Run it first on a lent GPU machine, before any campaign. It reads the GPU (NVML and
nvidia-smi, read only) and never changes a setting: Nsight Compute always runs with
``--clock-control none``. Each check prints one line of a PASS/FAIL/INFO/SKIP table;
the JSON file (rewritten after every check) holds the details:

=================  ========================================================================
env                device, driver, CUDA, tool and package versions
floor              empty kernel timed with and without the ~50 µs busy-wait ahead of it
cupy-timing        a corpus kernel through CupyBackend: correct output, median above floor
green-16/132       the driver-API path in green contexts of 16 and 132 SMs: granted SMs,
                   correct outputs, the 16-SM run slower in proportion; 132 SMs vs CuPy
cupy-under-green   whether CuPy launches honour a green context (information only)
nvml-energy        energy and average power over a >= 200 ms loop, and the power readings
ncu-metrics        ``ncu --query-metrics``: every metric of the set exists (missing ones
                   are listed and dropped)
ncu-batch          a counters campaign over one kernel's launch space (one ncu child)
samples            sampled runs (warm and cold L2) through CupyBackend
opencl-nvidia      NVIDIA's OpenCL driver through PyOpenCL, if it imports
campaign           a small campaign (times, samples, energy, sm-sweep) in child processes
=================  ========================================================================
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RESULTS: list[dict] = []
KERNEL = "matmul_tiled"       # a corpus kernel with CUDA and OpenCL versions
SCALING = "matmul_tiled"      # compute-bound enough at size large to scale with SMs


class CheckTimeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise CheckTimeout("the check ran out of time")


def record(name: str, status: str, summary: str, **details) -> None:
    RESULTS.append({"check": name, "status": status, "summary": summary, **details})
    print(f"{status:5s} {name:17s} {summary}", flush=True)


def check(name: str, seconds: int):
    def wrap(func):
        def run(ctx):
            signal.signal(signal.SIGALRM, _alarm)
            signal.alarm(seconds)
            start = time.monotonic()
            try:
                func(ctx)
            except Exception as exc:  # noqa: BLE001 (a failed check is a FAIL line)
                record(name, "FAIL", f"{type(exc).__name__}: {str(exc)[:160]}",
                       trace=traceback.format_exc()[-3000:])
            finally:
                signal.alarm(0)
                RESULTS[-1]["seconds"] = round(time.monotonic() - start, 2) if RESULTS else 0
                ctx["save"]()
        run.__name__ = name
        return run
    return wrap


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT / "src"), env.get("PYTHONPATH", "")] if p)
    return env


def _run(cmd: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or _env(),
                          cwd=str(ROOT))


# -- checks -------------------------------------------------------------------------------
@check("env", 60)
def check_env(ctx):
    from kerncast.measure._cupy import CupyBackend
    from kerncast.measure._provenance import ncu_path, ncu_version, python_tool_versions

    backend = CupyBackend()
    ctx["cupy"] = backend
    described = backend.describe()
    smi = shutil.which("nvidia-smi")
    query = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit"
    smi_out = _run([smi, f"--query-gpu={query}", "--format=csv"], 30).stdout if smi else ""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    nvcc_v = _run([nvcc, "--version"], 30).stdout.strip().splitlines()[-1] \
        if Path(nvcc).exists() else ""
    record("env", "PASS", f"{backend.device_name} ({backend.device_key}), {backend.sm_count} SMs, "
           f"L2 {backend.l2_bytes >> 20} MiB, driver {described['driver_version']}, CUDA "
           f"{described['runtime_version']}, ncu {ncu_version() or 'missing'}",
           describe=described, nvidia_smi=smi_out, ncu=ncu_path(), nvcc=nvcc_v,
           python=platform.python_version(), packages=python_tool_versions())


@check("floor", 60)
def check_floor(ctx):
    import numpy as np

    backend = ctx["cupy"]
    for _ in range(20):
        backend.time_empty(True)
        backend.time_empty(False)
    spun = [backend.time_empty(True) for _ in range(200)]
    bare = [backend.time_empty(False) for _ in range(200)]
    with_spin, without = float(np.median(spun)), float(np.median(bare))
    ctx["floor"] = with_spin
    ok = with_spin < without and with_spin < 6e-6
    record("floor", "PASS" if ok else "FAIL",
           f"empty kernel {with_spin * 1e6:.2f} µs with the busy-wait ahead, "
           f"{without * 1e6:.2f} µs without (expected ~3.8 vs ~7.1 on an H100)",
           with_spin_s=with_spin, without_spin_s=without,
           with_spin_p10_p90=[float(np.percentile(spun, 10)), float(np.percentile(spun, 90))])


@check("cupy-timing", 90)
def check_cupy_timing(ctx):
    from kerncast.corpus import get_kernel
    from kerncast.measure._api import monitor_for
    from kerncast.measure._run import measure_config

    backend = ctx["cupy"]
    kernel = get_kernel(KERNEL)
    row = measure_config(backend, kernel, kernel.launch("medium"), monitor=monitor_for(backend))
    floor = ctx.get("floor", 0.0)
    ok = row["status"] == "ok" and row["time_median_s"] > floor
    record("cupy-timing", "PASS" if ok else "FAIL",
           f"{KERNEL} medium {row['config']}: {row['status']}, median "
           f"{(row.get('time_median_s') or 0) * 1e6:.2f} µs over {row['repetitions']} runs "
           f"(IQR {(row.get('time_iqr_s') or 0) * 1e6:.2f} µs, converged {row['converged']}), "
           f"{row.get('registers')} registers, SM clock {row['sm_clock_mhz_before']} -> "
           f"{row['sm_clock_mhz_after']} MHz", row=row)


@check("green", 100)
def check_green(ctx):
    from kerncast.corpus import get_kernel
    from kerncast.measure._driver import DriverBackend
    from kerncast.measure._prep import prepare
    from kerncast.measure._run import measure_config

    kernel = get_kernel(SCALING)
    config = kernel.launch("large")
    prepared = prepare(kernel, config)
    rows = {}
    for sms in (16, 132):
        backend = DriverBackend(sm_count=sms)
        rows[sms] = measure_config(backend, kernel, config, prepared=prepared)
        rows[sms]["granted"] = backend.sm_count
        backend.close()
    cupy_row = measure_config(ctx["cupy"], kernel, config, prepared=prepared)
    t16, t132, tcupy = (rows[16]["time_median_s"], rows[132]["time_median_s"],
                        cupy_row["time_median_s"])
    ratio = t16 / t132 if t16 and t132 else float("nan")
    agree = abs(t132 - tcupy) / tcupy if t132 and tcupy else float("nan")
    for sms in (16, 132):
        ok = rows[sms]["status"] == "ok" and rows[sms]["granted"] == sms
        record(f"green-{sms}", "PASS" if ok else "FAIL",
               f"{SCALING} large on {rows[sms]['granted']} SMs (asked {sms}): "
               f"{rows[sms]['status']}, median {(rows[sms].get('time_median_s') or 0) * 1e3:.3f} ms"
               + (f"; 16-SM/132-SM time ratio {ratio:.2f} (ideal 8.25)" if sms == 16 else
                  f"; CuPy on the whole GPU {tcupy * 1e3:.3f} ms (differs by {agree:.1%})"),
               row=rows[sms], error=rows[sms].get("error", ""))
    if not (4.0 <= ratio <= 10.0) or not agree <= 0.1:
        record("green-scaling", "FAIL", f"ratio {ratio:.2f} outside 4..10 or driver/CuPy "
               f"difference {agree:.1%} above 10%", cupy_row=cupy_row)
    else:
        record("green-scaling", "PASS", f"ratio {ratio:.2f}, driver vs CuPy at 132 SMs {agree:.1%}")


CUPY_GREEN = r'''
import json, sys, numpy as np
from cuda.bindings import driver as cu
def ck(r):
    if r[0] != cu.CUresult.CUDA_SUCCESS: raise RuntimeError(str(r[0]))
    return r[1] if len(r) == 2 else (r[1:] if len(r) > 2 else None)
ck(cu.cuInit(0)); dev = ck(cu.cuDeviceGet(0))
SRC = r"""extern "C" __global__ void busy(float* out, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) x = x * 1.000001f + 0.5f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = x; }"""
def green():
    res = ck(cu.cuDeviceGetDevResource(dev, cu.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM))
    groups, _, _ = ck(cu.cuDevSmResourceSplitByCount(1, res, 0, 16))
    desc = ck(cu.cuDevResourceGenerateDesc([groups[0]], 1))
    g = ck(cu.cuGreenCtxCreate(desc, dev, cu.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM))
    ck(cu.cuCtxSetCurrent(ck(cu.cuCtxFromGreenCtx(g))))
    return ck(cu.cuGreenCtxStreamCreate(g, cu.CUstream_flags.CU_STREAM_NON_BLOCKING, 0))
def run(cp, stream):
    k = cp.RawKernel(SRC, "busy")
    out = cp.zeros(132 * 8 * 256, cp.float32)
    k((132 * 8,), (256,), (out, np.int32(20000)), stream=stream)
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record(stream); k((132 * 8,), (256,), (out, np.int32(20000)), stream=stream); b.record(stream)
    b.synchronize()
    return cp.cuda.get_elapsed_time(a, b)
out = {}
if sys.argv[1] == "green-first":
    gs = green()
    import cupy as cp
    try: out["green16_ms"] = run(cp, cp.cuda.ExternalStream(int(gs)))
    except Exception as e: out["green_error"] = repr(e)
    ck(cu.cuCtxSetCurrent(ck(cu.cuDevicePrimaryCtxRetain(dev))))
    out["full_ms"] = run(cp, cp.cuda.Stream(non_blocking=True))
else:
    import cupy as cp
    out["full_ms"] = run(cp, cp.cuda.Stream(non_blocking=True))
    gs = green()
    try: out["green16_ms"] = run(cp, cp.cuda.ExternalStream(int(gs)))
    except Exception as e: out["green_error"] = repr(e)
if "green16_ms" in out: out["ratio"] = out["green16_ms"] / out["full_ms"]
print(json.dumps(out))
'''


@check("cupy-under-green", 60)
def check_cupy_green(ctx):
    found = {}
    for order in ("green-first", "primary-first"):
        proc = _run([sys.executable, "-c", CUPY_GREEN, order], 50)
        try:
            found[order] = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            found[order] = {"error": (proc.stderr or proc.stdout)[-600:]}
    words = []
    for order, res in found.items():
        if "ratio" in res:
            limited = "SM-limited" if res["ratio"] > 3 else "NOT limited"
            words.append(f"{order}: works, 16-SM/full {res['ratio']:.2f} ({limited})")
        else:
            words.append(f"{order}: fails ({str(res.get('green_error') or res.get('error'))[:80]})")
    record("cupy-under-green", "INFO", "; ".join(words), results=found)


@check("nvml-energy", 60)
def check_energy(ctx):
    from kerncast.corpus import get_kernel
    from kerncast.measure._energy import measure_energy
    from kerncast.measure._nvml import Nvml, NvmlEnergyObserver

    backend = ctx["cupy"]
    nvml = Nvml(pci_bus_id=backend.pci_bus_id)
    kernel = get_kernel(KERNEL)
    row = measure_energy(backend, kernel, kernel.launch("large"), NvmlEnergyObserver(nvml),
                         monitor=nvml)
    # NVML's power readings average over about a second and lag a loop this short (seen on
    # the H100: 173 W read while the energy counter gave 460 W); the counter is the
    # measurement, the readings only have to lie between idle and the counter's average.
    ok = (row["status"] == "ok" and row["energy_j"] > 0 and row["duration_s"] >= 0.2
          and row["idle_power_w"] < row["avg_power_w"] < 1000
          and row["power_samples_max_w"] <= 1.1 * row["avg_power_w"])
    record("nvml-energy", "PASS" if ok else "FAIL",
           f"{row['launches']} launches in {row['duration_s']:.3f} s: {row['energy_j']:.2f} J, "
           f"{row['avg_power_w']:.0f} W average (readings {row['power_samples_mean_w']:.0f} W "
           f"mean, {row['power_samples_max_w']:.0f} W max, idle {row['idle_power_w']:.0f} W), "
           f"GPU busy {row['gpu_busy_fraction']:.0%}", row=row)


@check("ncu-metrics", 90)
def check_ncu_metrics(ctx):
    from kerncast.measure._ncu import NcuObserver, available_metrics

    observer = NcuObserver()
    available = available_metrics(observer.ncu)
    missing = observer.check_metrics(available)
    ctx["ncu_missing"] = missing
    ctx["ncu_cache"] = {"ncu_version": observer.version, "available": sorted(available)}
    record("ncu-metrics", "PASS" if not missing else "INFO",
           f"{len(observer.metrics)} of {len(observer.requested)} metrics known to ncu "
           f"{observer.version}" + (f"; dropped: {', '.join(missing)}" if missing else ""),
           missing=missing, kept=observer.metrics, available_count=len(available))


@check("ncu-batch", 110)
def check_ncu_batch(ctx):
    from kerncast.data import Dataset
    from kerncast.measure._campaign import Campaign

    out = Path(tempfile.mkdtemp(prefix="kerncast-selftest-ncu-"))
    if "ncu_cache" in ctx:  # the metric check above already asked ncu
        (out / "ncu_metrics.json").write_text(json.dumps(ctx["ncu_cache"]))
    result = Campaign(out, device=ctx["cupy"].device_key, backend="cupy",
                      experiments=["counters"], kernels=[KERNEL], sizes=["small"],
                      configs="all", workers=0, deadline_s=100).run()
    counters = Dataset.read(out).counters
    ok_rows = counters[counters["status"] == "ok"]
    dur = ok_rows["gpu__time_duration.sum"] if "gpu__time_duration.sum" in ok_rows else []
    ok = len(ok_rows) == len(counters) > 0 and (dur > 0).all() and \
        (ok_rows.get("smsp__inst_executed.sum", 0) > 0).all()
    sample = ok_rows.iloc[0].to_dict() if len(ok_rows) else {}
    record("ncu-batch", "PASS" if ok else "FAIL",
           f"{len(ok_rows)} of {len(counters)} launches profiled in {result.elapsed_s:.1f} s; "
           f"statuses {result.statuses}; {sum(1 for c in counters.columns if '__' in c)} metric "
           "columns", first_row={k: (v if isinstance(v, (int, float, str)) else str(v))
                                 for k, v in sample.items()},
           errors=sorted(set(counters["error"]))[:5])


@check("samples", 60)
def check_samples(ctx):
    from kerncast.corpus import get_kernel
    from kerncast.measure._samples import measure_samples

    kernel = get_kernel("matmul_naive")
    rows = measure_samples(ctx["cupy"], kernel, kernel.launch("large"))
    ok = rows and {r["status"] for r in rows} == {"ok"}
    brief = [(r["k"], r["l2_state"], r["blocks_launched"], round(r["time_median_s"] * 1e6, 2))
             for r in rows]
    record("samples", "PASS" if ok else "FAIL",
           f"{len(rows)} sample rows, k = {sorted({r['k'] for r in rows})}, psat "
           f"{rows[0]['psat'] if rows else '-'}", samples=brief,
           error=rows[0].get("error", "") if rows else "")


@check("opencl-nvidia", 60)
def check_opencl(ctx):
    try:
        import pyopencl  # noqa: F401
    except ImportError:
        record("opencl-nvidia", "SKIP", "pyopencl is not installed")
        return
    icd = Path(tempfile.gettempdir()) / "icd"
    icd.mkdir(exist_ok=True)
    (icd / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    env = {**_env(), "OCL_ICD_VENDORS": str(icd)}
    proc = _run([sys.executable, "-m", "kerncast", "measure", f"corpus:{KERNEL}", "--backend",
                 "opencl", "--device", ctx["cupy"].device_key, "--size", "medium", "--json"], 55, env)
    try:
        row = json.loads(proc.stdout)
    except json.JSONDecodeError:
        record("opencl-nvidia", "FAIL", (proc.stderr or proc.stdout).strip()[-200:])
        return
    record("opencl-nvidia", "PASS" if row["status"] == "ok" else "FAIL",
           f"{row['status']}: median {(row.get('time_median_s') or 0) * 1e6:.2f} µs "
           f"({row['device_name']}, {row['runtime_version']})", row=row)


@check("campaign", 110)
def check_campaign(ctx):
    out = Path(tempfile.mkdtemp(prefix="kerncast-selftest-campaign-"))
    proc = _run([sys.executable, "-m", "kerncast", "measure", "corpus", "--device",
                 ctx["cupy"].device_key, "--out", str(out), "--kernels", "matmul_naive",
                 "--sizes", "small,medium", "--experiments", "times,samples,energy,sm-sweep",
                 "--sm-counts", "16,64", "--configs", "default", "--deadline", "90", "--json"], 100)
    result = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    summary = _run([sys.executable, "-m", "kerncast", "data", "summary", str(out), "--json"], 60)
    info = json.loads(summary.stdout)[0] if summary.stdout.strip().startswith("[") else {}
    ok = proc.returncode == 0 and result.get("remaining") == 0 and \
        set(result.get("statuses", {})) == {"ok"} and info.get("empty_provenance") == {}
    record("campaign", "PASS" if ok else "FAIL",
           f"exit {proc.returncode}; rows {result.get('rows')}; statuses {result.get('statuses')}; "
           f"empty provenance {info.get('empty_provenance')}", result=result, data_summary=info,
           stderr=proc.stderr[-1500:])


CHECKS = [check_env, check_floor, check_cupy_timing, check_green, check_cupy_green, check_energy,
          check_ncu_metrics, check_ncu_batch, check_samples, check_opencl, check_campaign]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    def save() -> None:
        out.write_text(json.dumps({"results": RESULTS, "seconds": time.monotonic() - started},
                                  indent=1, default=str))

    ctx: dict = {"save": save}
    print(f"{'':5s} {'check':17s} result", flush=True)
    for run in CHECKS:
        if run is not check_env and "cupy" not in ctx:
            record(run.__name__, "SKIP", "no CuPy backend (see env)")
            save()
            continue
        run(ctx)
    failed = [r["check"] for r in RESULTS if r["status"] == "FAIL"]
    print(f"{len(RESULTS)} lines, {len(failed)} FAIL, {time.monotonic() - started:.0f} s; "
          f"details in {out}")
    save()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
