"""Run the micro-benchmarks of ``ubench.cu`` on a CUDA GPU through CuPy.

Each measurement is one short launch sequence; the whole calibration takes well
under a minute on an H100. Timed launches follow a ``spin`` kernel of ~50 µs so that
host launch gaps stay outside the event interval. Nothing changes the GPU's settings:
clocks are only read (NVML), never set.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from kerncast import __version__
from kerncast._errors import ToolchainError
from kerncast.calibrate._analysis import cache_size_from_curve, fit_line, granularity_from_curve
from kerncast.calibrate._model import (LOADED_CURVE, MICROBENCHMARKS, SPREAD_CURVE, STORE_CURVE,
                                       TURNAROUND_CURVE, Calibration, InstructionTiming)
from kerncast.devices import Device

__all__ = ["ARITH_OPS", "PARTS", "run_calibration", "update_part"]

UNROLL, ILP = 32, 8
# Instruction class -> (kernel suffix, dtype, PTX instructions per chain step).
ARITH_OPS = {
    "int": ("int_add", np.int32, 2),
    "int_mul": ("int_mul", np.int32, 2),
    "int_mad": ("int_mad", np.int32, 2),
    "int_logic": ("int_logic", np.int32, 4),
    "fp32": ("fp32_fma", np.float32, 1),
    "fp32_add": ("fp32_add", np.float32, 1),
    "fp64": ("fp64_fma", np.float64, 1),
    "fp64_add": ("fp64_add", np.float64, 1),
    "sfu": ("sfu_sin", np.float32, 1),
    "sfu_ex2": ("sfu_ex2", np.float32, 1),
    "sfu_rsqrt": ("sfu_rsqrt", np.float32, 1),
    "sfu_lg2": ("sfu_lg2", np.float32, 1),
    "conversion": ("conversion", np.float32, 2),
    "fp32_div": ("fp32_div", np.float32, 1),
    "warp": ("shuffle", np.int32, 1),
}
L1_FOOTPRINTS_KIB = [8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 320, 512, 1024]
L2_FOOTPRINTS_MIB = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96]
STRIDES = [4, 8, 16, 32, 64, 128, 256]


class _Bench:
    """Compiled micro-benchmarks and the timing helpers around them."""

    def __init__(self, device: Device):
        try:
            import cupy as cp  # noqa: PLC0415 (optional dependency)
        except ImportError:
            raise ToolchainError("calibration needs CuPy and an NVIDIA GPU: pip install "
                                 "'kerncast[cuda]' on a machine with a GPU") from None
        self.cp = cp
        self.device = device
        self.mod = cp.RawModule(code=MICROBENCHMARKS.read_text(), options=("-std=c++17",))
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        self.sms = int(props["multiProcessorCount"])
        self.l2_bytes = int(props["l2CacheSize"])
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.clock_hz = self._clock_mhz() * 1e6  # a first guess for the spin lengths
        self.clock_hz = self._measure_clock()

    def fn(self, name: str):
        return self.mod.get_function(name)

    def _clock_mhz(self) -> float:
        try:
            import pynvml  # noqa: PLC0415 (on use: nvidia-ml-py)

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            return float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
        except Exception:  # NVML absent: the spec's boost clock is the best guess
            return self.device.compute.boost_clock_mhz

    def _measure_clock(self) -> float:
        """SM cycles per second under load: a spin of known cycles timed with events."""
        cycles = 40_000_000
        seconds = self.timed(lambda: self.fn("spin")((1,), (1,), (np.int64(cycles),)), reps=3)
        return cycles / seconds

    def timed(self, launch: Callable[[], None], reps: int = 5) -> float:
        """Median seconds of ``launch`` over ``reps`` runs, host gaps excluded."""
        cp = self.cp
        spin = self.fn("spin")
        times = []
        with self.stream:
            launch()  # warm-up
            for _ in range(reps):
                start, end = cp.cuda.Event(), cp.cuda.Event()
                spin((1,), (1,), (np.int64(self.clock_hz * 50e-6),))
                start.record()
                launch()
                end.record()
                end.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        return float(np.median(times))

    def cycles(self, name: str, grid, block, args, out_index: int = 0) -> float:
        """Run a clock64-instrumented kernel once (after a warm-up) and read its cycles."""
        cp = self.cp
        cyc = cp.zeros(max(grid[0], 1), dtype=cp.int64)
        kernel = self.fn(name)
        for _ in range(2):
            kernel(grid, block, (*args[:out_index], cyc, *args[out_index:]))
            cp.cuda.runtime.deviceSynchronize()
        return float(cyc.get().max())


def _arith(b: _Bench, progress) -> dict[str, InstructionTiming]:
    cp = b.cp
    out = {}
    for cls, (suffix, dtype, per_step) in ARITH_OPS.items():
        sink = cp.ones(4096, dtype=dtype)
        a = dtype(1) if np.dtype(dtype).kind == "i" else dtype(0.999)
        if suffix == "shuffle":
            a = dtype(1)  # y = 1 + lane: the source lane of each rotation
        iters = 256
        lat_cycles = b.cycles(f"lat_{suffix}", (1,), (1,), (sink, np.int32(iters), a), out_index=1)
        latency = lat_cycles / (iters * UNROLL * per_step)
        kernel = b.fn(f"tput_{suffix}")
        grid, block = (b.sms * 8,), (256,)
        titers = 64
        seconds = b.timed(lambda: kernel(grid, block, (sink, np.int32(titers), a)))
        ops = grid[0] * block[0] * titers * UNROLL * ILP * per_step
        out[cls] = InstructionTiming(round(latency, 2),
                                     round(ops / (seconds * b.clock_hz * b.sms), 2))
        progress(f"{cls}: latency {latency:.1f} cycles, {out[cls].throughput_per_clk_sm} /clk/SM")
    return out


def _chain(words: int, stride_words: int) -> np.ndarray:
    arr = np.zeros(words, dtype=np.uint32)
    idx = np.arange(0, words, stride_words, dtype=np.uint64)
    arr[idx] = ((idx + stride_words) % words).astype(np.uint32)
    return arr


def _chase(b: _Bench, footprint: int, stride: int, op: str, warm: bool = True) -> float:
    cp = b.cp
    words = footprint // 4
    arr = cp.asarray(_chain(words, stride // 4))
    steps = max(words // (stride // 4), 1)
    sink = cp.zeros(1, dtype=cp.uint32)
    cyc = b.cycles(f"chase_{op}", (1,), (1,),
                   (arr, np.int32(steps), np.int32(int(warm)), sink), out_index=4)
    return cyc / steps


def _flush(b: _Bench) -> None:
    cp = b.cp
    n = 2 * b.l2_bytes // 16
    buf = cp.empty(n * 4, dtype=cp.float32)
    b.fn("flush_l2")((b.sms * 4,), (256,), (buf, np.int64(n), np.float32(1)))
    cp.cuda.runtime.deviceSynchronize()


def _dram_latency(b: _Bench) -> float:
    cp = b.cp
    footprint, stride = 64 << 20, 4096
    words = footprint // 4
    arr = cp.asarray(_chain(words, stride // 4))
    steps = words // (stride // 4)
    sink = cp.zeros(1, dtype=cp.uint32)
    cyc = cp.zeros(1, dtype=cp.int64)
    _flush(b)
    b.fn("chase_l2")((1,), (1,), (arr, np.int32(steps), np.int32(0), sink, cyc))
    cp.cuda.runtime.deviceSynchronize()
    return float(cyc.get()[0]) / steps


def _latencies(b: _Bench, progress) -> tuple[dict, dict]:
    l1 = [[kib * 1024, _chase(b, kib * 1024, 128, "l1")] for kib in L1_FOOTPRINTS_KIB]
    variants = {op: _chase(b, 16 * 1024, 128, op) for op in ("l1", "nc", "l1last", "l2")}
    l2 = [[mib << 20, _chase(b, mib << 20, 128, "l2")] for mib in L2_FOOTPRINTS_MIB]
    strided = [[s, _chase(b, 4 << 20, s, "l1")] for s in STRIDES]
    shared_arr = b.cp.asarray(_chain(4096, 33))
    sink = b.cp.zeros(1, dtype=b.cp.uint32)
    shared = b.cycles("chase_shared", (1,), (32,), (shared_arr, np.int32(4096), np.int32(0), sink),
                      out_index=4) / 4096
    memory = {
        "l1_hit_latency_cycles": round(l1[0][1], 1),
        "l2_hit_latency_cycles": round(l2[2][1], 1),
        "dram_latency_cycles": round(_dram_latency(b), 1),
        "shared_latency_cycles": round(shared, 1),
        "l1_bytes_measured": float(cache_size_from_curve(l1)),
        "l2_bytes_measured": float(cache_size_from_curve(l2)),
        "fetch_granularity_bytes": float(granularity_from_curve(strided)),
    }
    progress(f"latencies: L1 {memory['l1_hit_latency_cycles']}, L2 {memory['l2_hit_latency_cycles']}, "
             f"DRAM {memory['dram_latency_cycles']}, shared {memory['shared_latency_cycles']} cycles")
    memory["l1_hit_latency_cycles"] = round(min(variants.values()), 1)
    memory.update({f"chase16k_{op}_cycles": round(v, 1) for op, v in variants.items()})
    return memory, {"l1_latency_vs_footprint": l1, "l2_latency_vs_footprint": l2,
                    "l1_latency_vs_stride": strided}


#: DRAM streams timed in both shapes (kernels ``bw_<stream>`` and ``bw_<stream>_once``),
#: with the buffers each moves per element
DRAM_STREAMS = (("read", 1), ("write", 1), ("copy", 2))


def _dram_bandwidths(b: _Bench, progress) -> dict[str, float]:
    """DRAM read, write and copy bandwidths (``dram_<stream>_gbs``, GB/s moved): each the
    faster of two shapes of a 2 GiB float4 stream, a grid-stride loop over 16 blocks of
    256 threads per SM (``dram_<stream>_strided_gbs``) and one element a thread over a
    grid that covers the buffer (``dram_<stream>_once_gbs``). Blocks dispatched in order
    keep the addresses in flight close together; grid-stride blocks drift apart over the
    buffer, and on an H200 their writes and copies reach 8-10% less. The faster is the
    DRAM's ceiling, which the static model's DRAM server holds."""
    cp = b.cp
    n = (2 << 30) // 16
    a = cp.ones(n * 4, dtype=cp.float32)
    c = cp.empty_like(a)
    sink = cp.zeros(4096, dtype=cp.float32)
    args = {"read": (a, np.int64(n), sink), "write": (c, np.int64(n), np.float32(2)),
            "copy": (a, c, np.int64(n))}
    shapes = {"strided": ("", (b.sms * 16,)), "once": ("_once", (-(-n // 256),))}
    out: dict[str, float] = {}
    for stream, buffers in DRAM_STREAMS:
        for shape, (tail, grid) in shapes.items():
            kernel = b.fn(f"bw_{stream}{tail}")
            seconds = b.timed(lambda k=kernel, g=grid, s=stream: k(g, (256,), args[s]))
            out[f"dram_{stream}_{shape}_gbs"] = round(buffers * n * 16 / seconds / 1e9, 1)
        out[f"dram_{stream}_gbs"] = max(out[f"dram_{stream}_{shape}_gbs"] for shape in shapes)
    progress(f"DRAM read {out['dram_read_gbs']} GB/s, write {out['dram_write_gbs']} GB/s, "
             f"copy {out['dram_copy_gbs']} GB/s (grid-stride: "
             f"{out['dram_read_strided_gbs']}, {out['dram_write_strided_gbs']}, "
             f"{out['dram_copy_strided_gbs']})")
    return out


def _bandwidths(b: _Bench, progress) -> dict[str, float]:
    """The DRAM's bandwidths (:func:`_dram_bandwidths`), the L2's and shared memory's."""
    out = _dram_bandwidths(b, progress)
    cp = b.cp
    a = cp.ones((16 << 20) // 4, dtype=cp.float32)
    sink = cp.zeros(4096, dtype=cp.float32)
    grid, block = (b.sms * 16,), (256,)
    l2n, reps = (16 << 20) // 16, 40
    l2 = b.timed(lambda: b.fn("bw_l2")(grid, block, (a, np.int64(l2n), np.int32(reps), sink)))
    iters = 1024
    shared = b.timed(lambda: b.fn("bw_shared")((b.sms * 2,), (1024,), (sink, np.int32(iters))))
    shared_bytes = b.sms * 2 * 1024 * iters * UNROLL * 4
    out.update({
        "l2_read_gbs": round(l2n * 16 * reps / l2 / 1e9, 1),
        "shared_bytes_per_clk_sm": round(shared_bytes / (shared * b.clock_hz * b.sms), 1),
    })
    progress(f"bandwidth: L2 {out['l2_read_gbs']} GB/s")
    return out


#: threads, block size and adds per thread of the global-atomics benchmarks
ATOMIC_THREADS_PER_SM, ATOMIC_BLOCK, ATOMIC_ITERS = 8 * 256, 256, 64


def _global_adds_per_s(b: _Bench, addr, slots: int) -> float:
    """Global atomic adds per second when thread t adds to ``addr[t % slots]``."""
    threads = b.sms * ATOMIC_THREADS_PER_SM
    t = b.timed(lambda: b.fn("atomic_global")(
        (threads // ATOMIC_BLOCK,), (ATOMIC_BLOCK,),
        (addr, np.int32(slots), np.int32(ATOMIC_ITERS))))
    return round(threads * ATOMIC_ITERS / t, 0)


def _atomics(b: _Bench, progress) -> dict[str, float]:
    cp = b.cp
    threads, iters = b.sms * ATOMIC_THREADS_PER_SM, ATOMIC_ITERS
    addr = cp.zeros(threads, dtype=cp.uint32)
    out = {}
    for label, slots in (("uncontended", threads), ("contended", 1)):
        out[f"atomic_global_{label}_per_s"] = _global_adds_per_s(b, addr, slots)
    for label, slots in (("uncontended", 1024), ("contended", 1)):
        t = b.timed(lambda s=slots: b.fn("atomic_shared")((b.sms * 2,), (1024,),
                                                         (addr, np.int32(s), np.int32(iters))))
        out[f"atomic_shared_{label}_per_clk_sm"] = round(
            b.sms * 2 * 1024 * iters / (t * b.clock_hz * b.sms), 3)
    lat = b.cycles("lat_atomic", (1,), (1,), (addr, np.int32(1024)), out_index=2) / 1024
    out["atomic_global_latency_cycles"] = round(lat, 1)
    progress(f"atomics: contended global {out['atomic_global_contended_per_s']:.3g}/s, "
             f"latency {lat:.0f} cycles")
    return out


#: distinct addresses of the random-atomics curve (words of one 4 KiB-aligned region)
ATOMIC_ADDRESSES = (1, 4, 32, 256, 4096, 65536)


def _atomic_curve(b: _Bench, progress) -> dict[str, list[list[float]]]:
    """Global atomic adds per second when every thread hits random words among N:
    the L2 serialises the operations on one address and those its atomic units share."""
    cp = b.cp
    threads, block, iters = b.sms * ATOMIC_THREADS_PER_SM, ATOMIC_BLOCK, ATOMIC_ITERS
    words = max(ATOMIC_ADDRESSES)
    raw = cp.zeros(words + 1024, dtype=cp.uint32)
    skip = (-raw.data.ptr % 4096) // 4  # start the bins on a 4 KiB boundary
    bins = raw[skip:skip + words]
    curve = []
    for n in ATOMIC_ADDRESSES:
        t = b.timed(lambda n=n: b.fn("atomic_random")((threads // block,), (block,),
                                                      (bins, np.uint32(n - 1), np.int32(iters))))
        curve.append([float(n), round(threads * iters / t, 0)])
    progress("atomics over N random addresses: " + ", ".join(f"{int(n)}: {r:.3g}/s"
                                                               for n, r in curve))
    return {"atomic_global_per_s_vs_addresses": curve, **_atomic_lines(b, progress)}


#: words of one 128-byte L2 line
LINE_WORDS = 32
#: lines of the line-atomics curve
ATOMIC_LINES = (1, 2, 4, 8, 16, 64)


def _atomic_lines(b: _Bench, progress) -> dict[str, list[list[float]]]:
    """Global atomic adds per second when each warp adds to the 32 words of one line,
    the warps spread over N consecutive lines (blocks merging their private histograms
    into one of N lines): the L2 applies the operations on a line one after another, and
    lines share its atomic units."""
    addr = b.cp.zeros(b.sms * ATOMIC_THREADS_PER_SM, dtype=b.cp.uint32)  # 512-byte aligned
    curve = [[float(n), _global_adds_per_s(b, addr, n * LINE_WORDS)] for n in ATOMIC_LINES]
    progress("atomics on the words of N lines: " + ", ".join(f"{int(n)}: {r:.3g}/s"
                                                             for n, r in curve))
    return {"atomic_global_per_s_vs_lines": curve}


#: (kernel, bytes per thread, vectors of one row each warp stores): 4-byte pieces of 32,
#: 16, 8 and 4 sectors a request (the last one whole sectors), 16-byte pieces of 32
#: sectors and whole sectors of 16
STORE_SHAPES = (("scatter_store", 4, 1), ("scatter_store", 4, 2), ("scatter_store", 4, 4),
                ("scatter_store", 4, 8), ("scatter_store4", 16, 1), ("scatter_store4", 16, 2))


#: distinct 128-byte lines among a warp's 32 loads
GATHER_LINES = (1, 2, 4, 8, 16, 32)


def _scatter_curve(b: _Bench, matrix_bytes: int, pad: int = 0) -> list[list[float]]:
    """[sectors per request, bytes of each sector written, sectors written per cycle per
    SM] when each warp-level store spans rows of a ``matrix_bytes`` row-major matrix,
    its rows a power of two bytes apart, or ``pad`` bytes more."""
    cp = b.cp
    cols_bytes = 16384 if matrix_bytes >= 64 << 20 else 4096
    rows = matrix_bytes // cols_bytes
    out = cp.empty(rows * (cols_bytes + pad) // 4, dtype=cp.float32)
    curve = []
    for kernel, width, group in STORE_SHAPES:
        vectors = matrix_bytes // width
        cols, pitch = cols_bytes // width, (cols_bytes + pad) // width
        tiles = vectors // 256
        t = b.timed(lambda k=kernel, g=group, c=cols, p=pitch, n=tiles: b.fn(k)(
            (b.sms * 8,), (256,), (out, np.int32(c), np.int32(p), np.int32(g), np.int64(n),
                                   np.float32(1))))
        piece = min(32, group * width)
        sectors_per_request = 32 // group * max(1, group * width // 32)
        written = vectors // 32 * sectors_per_request
        curve.append([float(sectors_per_request), float(piece),
                      round(written / (t * b.clock_hz * b.sms), 4)])
    return curve


def _gather_curve(b: _Bench) -> list[list[float]]:
    """Lines served per cycle per SM when a warp's 32 loads hit N distinct lines of a
    table that stays in L1."""
    cp = b.cp
    table = cp.ones(128 * 32, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    blocks, iters = b.sms * 8, 256
    curve = []
    for lines in GATHER_LINES:
        t = b.timed(lambda n=lines: b.fn("gather_l1")((blocks,), (256,),
                                                      (table, np.int32(n), np.int32(iters), sink)))
        requests = blocks * 8 * iters * 8
        curve.append([float(lines), round(requests * lines / (t * b.clock_hz * b.sms), 4)])
    return curve


def _access_curves(b: _Bench, progress) -> dict[str, list[list[float]]]:
    """The load/store path's rates for scattered warp requests, per SM, by how many
    sectors or lines one request spans: sectors stored per cycle (DRAM-sized and
    L2-resident matrices, rows a power of two bytes apart; and a DRAM-sized one whose
    rows are 32 bytes more apart) and L1 lines gathered per cycle."""
    out = {
        STORE_CURVE: _scatter_curve(b, 256 << 20),
        "store_sectors_per_clk_sm_vs_shape_l2": _scatter_curve(b, 16 << 20),
        "store_sectors_per_clk_sm_vs_shape_padded": _scatter_curve(b, 256 << 20, pad=32),
        "l1_gather_lines_per_clk_sm_vs_lines": _gather_curve(b),
    }
    for key, curve in out.items():
        progress(f"{key}: " + ", ".join(" ".join(f"{v:.3g}" for v in point) for point in curve))
    return out


def _barriers(b: _Bench, progress) -> dict[str, float]:
    cp = b.cp
    sink = cp.zeros(1, dtype=cp.float32)
    out = {}
    iters = 1024
    for warps in (1, 2, 4, 8, 16, 32):
        cyc = b.cycles("barrier_loop", (b.sms,), (32 * warps,), (np.int32(iters), sink), out_index=1)
        out[f"barrier_cycles_{warps}_warps"] = round(cyc / iters, 1)
    progress(f"barrier: {out['barrier_cycles_1_warps']} .. {out['barrier_cycles_32_warps']} cycles")
    return out


#: the shared-memory accesses timed: (kernel, what the figure is called)
SHARED_RATES = (("shared_load_1", "load_4"), ("shared_load_2", "load_8"),
                ("shared_load_4", "load_16"), ("shared_store_1", "store_4"),
                ("shared_store_2", "store_8"), ("shared_store_4", "store_16"),
                ("shared_broadcast_1", "broadcast_4"), ("shared_broadcast_4", "broadcast_16"),
                ("shared_halves_4", "halves_16"), ("shared_off_1", "off_4"))


def _shared_rates(b: _Bench, progress) -> dict[str, float]:
    """Cycles of the SM's shared-memory path per warp instruction, one block of 32 warps
    an SM each issuing accesses back to back (``shared_cycles_<kind>_<bytes a lane>``):
    loads and stores of consecutive words, loads of one word by every lane (4 and 16
    bytes) or by each half-warp (16 bytes), and loads predicated off in every lane."""
    iters, unroll, warps = 256, 16, 32
    out = {}
    for kernel, name in SHARED_RATES:
        cyc = b.cycles(kernel, (b.sms,), (1024,), (np.int32(iters), np.int32(0)),
                       out_index=2)
        out[f"shared_cycles_{name}"] = round(cyc / (iters * unroll * warps), 3)
    progress("shared memory, cycles a warp instruction: " + ", ".join(
        f"{k.removeprefix('shared_cycles_')} {v}" for k, v in out.items()))
    return out


def _launch(b: _Bench, progress) -> tuple[dict[str, float], dict[str, list[list[float]]]]:
    """(the launch's figures, the turnaround curve over warps per block)."""
    grids = [1, b.sms, b.sms * 8, b.sms * 80, b.sms * 800]
    times = [b.timed(lambda g=g: b.fn("empty_kernel")((g,), (256,), ()), reps=9) for g in grids]
    intercept, slope = fit_line(grids, times)
    out = {"empty_kernel_s": round(times[0], 9), "launch_overhead_s": round(intercept, 9),
           "per_block_s": slope}
    progress(f"launch: empty kernel {times[0] * 1e6:.2f} µs, {slope * 1e9:.3f} ns per block")
    turnaround, curve = _turnaround(b, progress)
    out.update(turnaround)
    return out, {TURNAROUND_CURVE: curve}


#: spins of the turnaround probe (cycles), its waves of blocks per SM slot, and the warps
#: per block it is measured at
TURNAROUND_SPINS, TURNAROUND_WAVES = (2_000, 4_000, 8_000, 16_000), 64
TURNAROUND_WARPS = (1, 2, 4, 8, 16, 32)


def _turnaround(b: _Bench, progress) -> tuple[dict[str, float], list[list[float]]]:
    """Cycles between a block's end and the start of the next one in its SM slot: blocks
    that each take a quarter of an SM's shared memory (four slots per SM, two for blocks
    of 32 warps, which the SM's threads limit) spin for a set time over
    ``TURNAROUND_WAVES`` waves; the time per wave less the spin, from a line fitted over
    the spins (its intercept). Measured for blocks of each of ``TURNAROUND_WARPS`` warps:
    ``[warps, cycles, cycles per spun cycle]``; the figures of one warp are kept apart."""
    sink = b.cp.zeros(1, dtype=b.cp.int32)
    curve = []
    for warps in TURNAROUND_WARPS:
        slots = min(4, 64 // warps)
        grid = b.sms * slots * TURNAROUND_WAVES
        times = [b.timed(lambda n=n: b.fn("spin_slot")((grid,), (32 * warps,),
                                                       (np.int64(n), sink)), reps=5)
                 for n in TURNAROUND_SPINS]
        intercept, slope = fit_line(list(TURNAROUND_SPINS),
                                    [t * b.clock_hz / TURNAROUND_WAVES for t in times])
        curve.append([float(warps), round(intercept, 1), round(slope, 4)])
    progress("launch: cycles from a block's end to the next block's start in its slot: "
             + ", ".join(f"{w:.0f} warps {c:.0f}" for w, c, _ in curve))
    first = curve[0]
    return {"block_turnaround_cycles": first[1], "turnaround_slope": first[2]}, curve


#: warps per SM and loads in flight per warp of the loaded DRAM probe, the least bytes it
#: reads and its block's threads
LOADED_WARPS, LOADED_LOADS, LOADED_BYTES = (2, 4, 8, 16, 32, 64), (1, 2, 4, 8), 1 << 30
LOADED_THREADS = 64


def _one_wave(b: _Bench, warps: int) -> tuple[int, int]:
    """(blocks, threads in all) of one wave of ``warps`` warps an SM in blocks of
    :data:`LOADED_THREADS`: the DRAM probes' grid."""
    blocks = b.sms * warps * 32 // LOADED_THREADS
    return blocks, blocks * LOADED_THREADS


def _loaded_latency(b: _Bench, progress) -> dict[str, list[list[float]]]:
    """DRAM latency under load: one wave of blocks of two warps streams a buffer four times
    the L2 or larger, each warp keeping a set number of 128-byte lines in flight
    (``dram_inflight_N``); per load, ``[bytes in flight per SM, warps per SM, read GB/s,
    latency in cycles]``, the latency by Little's law (bytes in flight over the bandwidth,
    which holds each warp's time between a load's return and its next issue too)."""
    cp = b.cp
    n = max(LOADED_BYTES, 4 * b.l2_bytes) // 4
    src = cp.ones(n, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    curve = []
    for loads in LOADED_LOADS:
        for warps in LOADED_WARPS:
            blocks, threads = _one_wave(b, warps)
            trips = n // (threads * loads)
            seconds = b.timed(lambda k=loads, g=blocks, t=trips: b.fn(f"dram_inflight_{k}")(
                (g,), (LOADED_THREADS,), (src, np.int64(t), sink)), reps=3)
            moved = trips * threads * loads * 4
            inflight = warps * loads * 128
            latency = inflight * b.sms * b.clock_hz * seconds / moved
            curve.append([float(inflight), float(warps), round(moved / seconds / 1e9, 1),
                          round(latency, 1)])
    curve.sort()
    progress("DRAM under load: " + ", ".join(
        f"{i / 1024:.1f} KiB/SM over {w:.0f} warps {g:.0f} GB/s {c:.0f} cycles"
        for i, w, g, c in curve[::4]))
    return {LOADED_CURVE: curve}


#: warps per SM of the spread probe (a light load: well under a tenth of the DRAM's
#: bandwidth), the trips each warp records, the first of them left out (the wave's
#: start) and the quantiles kept
SPREAD_WARPS, SPREAD_SAMPLES, SPREAD_SKIP, SPREAD_QUANTILES = 8, 48, 8, 16


def _latency_spread(b: _Bench, progress) -> dict[str, list[list[float]]]:
    """How single DRAM reads' latencies spread at light load (``dram_spread``): each warp
    times one 128-byte line at a time through a buffer four times the L2 or larger; the
    latencies at :data:`SPREAD_QUANTILES` evenly spaced quantiles, ``[quantile,
    cycles]``. A block waits for its last warp, so the spread, not only the mean, sets
    how long a block that streams through DRAM holds its slot."""
    cp = b.cp
    n = max(LOADED_BYTES, 4 * b.l2_bytes) // 4
    src = cp.ones(n, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    blocks, threads = _one_wave(b, SPREAD_WARPS)
    lat = cp.zeros(threads // 32 * SPREAD_SAMPLES, dtype=cp.int32)
    b.timed(lambda: b.fn("dram_spread")((blocks,), (LOADED_THREADS,), (
        src, np.int64(n // threads), np.int32(SPREAD_SAMPLES), lat, sink)), reps=1)
    samples = cp.asnumpy(lat).reshape(-1, SPREAD_SAMPLES)[:, SPREAD_SKIP:].astype(float)
    quantiles = (np.arange(SPREAD_QUANTILES) + 0.5) / SPREAD_QUANTILES
    cycles = np.quantile(samples, quantiles)
    progress(f"DRAM latency spread at light load: mean {samples.mean():.0f}, "
             f"standard deviation {samples.std():.0f}, quantiles "
             + ", ".join(f"{c:.0f}" for c in cycles[::3]) + " cycles")
    return {SPREAD_CURVE: [[round(float(q), 4), round(float(c), 1)]
                           for q, c in zip(quantiles, cycles)]}


def _provenance(b: _Bench) -> dict:
    cp = b.cp
    return {
        "device_name": b.name, "sm_count": b.sms, "l2_bytes": b.l2_bytes,
        "sm_clock_mhz_seen": b.clock_hz / 1e6,
        "driver": str(cp.cuda.runtime.driverGetVersion()),
        "cuda_runtime": str(cp.cuda.runtime.runtimeGetVersion()),
        "cupy": cp.__version__, "kerncast": __version__, "host": platform.node(),
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "method": "kerncast calibrate: inline-PTX chains (clock64), event-timed throughput "
                  "with a spin kernel ahead of each timed launch, pointer chasing",
    }


#: the parts of a calibration that can be measured again alone
PARTS = ("atomics", "access", "launch", "dram", "spread", "shared", "bandwidth")


def update_part(calibration: Calibration, device: Device, part: str,
                progress: Callable[[str], None] = print) -> Calibration:
    """``calibration`` with one part measured again on GPU 0 and the rest kept; the
    provenance records the update. ``atomics``: the atomic rates, latency and the
    random-address curve; ``access``: the scattered store and L1 gather curves;
    ``launch``: the launch overhead, the block dispatch rate and a slot's turnaround (by
    warps per block); ``dram``: the DRAM latency under load; ``spread``: how single
    DRAM reads' latencies spread at light load; ``shared``: the
    shared-memory path's cycles per warp access; ``bandwidth``: the DRAM's read, write
    and copy bandwidths."""
    if part not in PARTS:
        raise ValueError(f"unknown calibration part {part!r}; parts: {', '.join(PARTS)}")
    bench = _Bench(device)
    curves, memory = dict(calibration.curves), dict(calibration.memory)
    launch = dict(calibration.launch)
    if part == "atomics":
        curves.update(_atomic_curve(bench, progress))
        memory.update(_atomics(bench, progress))
    elif part == "launch":
        figures, curve = _launch(bench, progress)
        launch.update(figures)
        curves.update(curve)
    elif part == "dram":
        curves.update(_loaded_latency(bench, progress))
    elif part == "spread":
        curves.update(_latency_spread(bench, progress))
    elif part == "shared":
        memory.update(_shared_rates(bench, progress))
    elif part == "bandwidth":
        memory.update(_dram_bandwidths(bench, progress))
    else:
        curves.update(_access_curves(bench, progress))
    provenance = {**calibration.provenance,
                  f"{part}_updated": {**_provenance(bench), "part": part}}
    return replace(calibration, memory=memory, curves=curves, launch=launch,
                   provenance=provenance)


def run_calibration(device: Device, progress: Callable[[str], None] = print) -> Calibration:
    """Measure every figure of a :class:`Calibration` on GPU 0 (which should be ``device``)."""
    bench = _Bench(device)
    instructions = _arith(bench, progress)
    memory, curves = _latencies(bench, progress)
    memory.update(_bandwidths(bench, progress))
    memory.update(_atomics(bench, progress))
    curves.update(_atomic_curve(bench, progress))
    curves.update(_access_curves(bench, progress))
    sync = _barriers(bench, progress)
    memory.update(_shared_rates(bench, progress))
    curves.update(_loaded_latency(bench, progress))
    curves.update(_latency_spread(bench, progress))
    launch, turnaround = _launch(bench, progress)
    curves.update(turnaround)
    return Calibration(device=device.key, provenance=_provenance(bench),
                       instructions=instructions, memory=memory, curves=curves,
                       sync=sync, launch=launch)
