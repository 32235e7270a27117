"""The machine the simulator runs on: a device spec plus its calibration.

Every figure the timing model uses comes from here, and every one is either in the
device spec (SMs, schedulers, caches, peak bandwidth, clocks) or measured by the
calibration micro-benchmarks (latencies, throughputs, achieved bandwidths, barrier
and launch costs). A device without a calibration borrows the calibration of the
nearest calibrated architecture, adapted to its spec (clock-independent figures in
cycles are kept; bandwidths and per-SM throughputs are scaled by the spec ratios),
and says so in ``adapted_from``, with what that assumes in ``Machine.assumptions``
(:func:`adaptation`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.calibrate import (CALIBRATION_DIR, LOADED_CURVE, SPREAD_CURVE, STORE_CURVE,
                                TURNAROUND_CURVE, Calibration, load_calibration)
from kerncast.devices import Device, get_device, list_devices
from kerncast.ptx import InstrClass

__all__ = ["PIPES", "Machine", "adaptation", "machine_for"]

#: the calibration's cycles from a block's end to the next block's start in its slot
TURNAROUND = "block_turnaround_cycles"
#: the share of the DRAM's peak past which the loaded-latency probe measures the queue of
#: a saturated DRAM (latency = bytes in flight / peak), which the pipeline's DRAM server
#: forms itself; the latency added for the load stops growing there
SATURATED = 0.9
#: the prefixes of a calibration's barrier release figures and of its measured barrier
#: loop's periods (:meth:`Machine.barrier_cycles`)
RELEASE, MEASURED = "barrier_release_cycles_", "barrier_cycles_"

# Execution pipes of a scheduler (sub-partition). Memory instructions go through the
# SM-wide load/store path (``lsu``), modelled separately. ``fma`` is the FP32 pair of
# 16-lane pipes, one warp instruction a cycle between them; ``fma_heavy`` the half of it
# that also runs integer multiplies (see ``kerncast.sim._sassissue``).
PIPES = ("alu", "fma", "fp64", "sfu", "cvt", "ctrl", "lsu", "fma_heavy")

# Instruction class -> (pipe, calibration key for throughput and latency).
_CLASS = {
    InstrClass.INT: ("alu", "int"),
    InstrClass.INT_MUL: ("fma", "int_mul"),
    InstrClass.INT_DIV: ("fma", "int_mul"),
    InstrClass.FP32: ("fma", "fp32"),
    InstrClass.FP32_DIV: ("fma", "fp32_div"),
    InstrClass.FP64: ("fp64", "fp64"),
    InstrClass.FP64_DIV: ("fp64", "fp64"),
    InstrClass.FP16: ("fma", "fp32"),
    InstrClass.SFU: ("sfu", "sfu"),
    InstrClass.CONVERSION: ("cvt", "conversion"),
    InstrClass.MOVE: ("alu", "int"),
    InstrClass.WARP: ("cvt", "warp"),
}
# Global constants of the memory model (documented, and evaluated with cross-validation
# by kernel in benchmarks/static_accuracy.py): what one SM can pull from the L2 per
# cycle, and from DRAM (a device-to-device copy saturates an H100's DRAM from about 64
# SMs on: 2.75 TB/s / 64 SMs / 1.98 GHz = 21.7 bytes per cycle per SM).
SM_L2_BYTES_PER_CYCLE = 64.0
SM_DRAM_BYTES_PER_CYCLE = 24.0

# Software sequences: SASS instructions issued per PTX instruction (div/rem and the
# IEEE divisions expand to Newton iterations; 64-bit integer multiply to 3-4 IMADs).
_SEQUENCE = {InstrClass.INT_DIV: 20, InstrClass.FP32_DIV: 8, InstrClass.FP64_DIV: 20}


@dataclass(frozen=True)
class Machine:
    """What the pipeline simulation needs to know, in cycles and bytes."""

    device: Device
    calibration: Calibration
    adapted_from: str | None
    clock_hz: float
    schedulers: int
    issue: dict[str, float] = field(default_factory=dict)     # class -> pipe cycles per warp instr
    latency: dict[str, float] = field(default_factory=dict)   # class -> dependent-issue latency
    pipe_of: dict[str, str] = field(default_factory=dict)
    sequence: dict[str, int] = field(default_factory=dict)    # class -> issue slots
    # classes whose calibration timed the whole PTX instruction (a software sequence
    # included): their throughput and latency are not multiplied by the sequence
    measured_whole: frozenset[str] = frozenset({"fp32_div"})
    #: cycles a scheduler's integer ALU takes per SASS warp instruction (the spec's INT32
    #: lanes), and the heavy FP32 half per integer multiply (calibrated)
    alu_cycles: float = 2.0
    heavy_cycles: float = 2.0
    #: what a prediction rests on where the calibration is another device's (empty where
    #: the device has its own): each figure carried over, and how (:func:`adaptation`)
    assumptions: tuple[str, ...] = ()

    @property
    def sm_count(self) -> int:
        return self.device.compute.sm_count

    def mem(self, key: str, default: float) -> float:
        value = self.calibration.memory.get(key)
        return float(value) if value is not None and value == value else default

    @property
    def l1_latency(self) -> float:
        l2 = self.l2_latency
        measured = self.mem("l1_hit_latency_cycles", 0.25 * l2)
        # A chase that never hit in L1 measures L2: fall back to the in-sector hit time.
        return measured if measured < 0.6 * l2 else self._sector_hit_latency(l2)

    def _sector_hit_latency(self, l2: float) -> float:
        curve = self.calibration.curves.get("l1_latency_vs_stride")
        if curve and curve[0][0] <= 4:
            per_sector = 32 // int(curve[0][0])
            return max((curve[0][1] * per_sector - l2) / (per_sector - 1), 1.0)
        return 0.15 * l2

    @property
    def l2_latency(self) -> float:
        return self.mem("l2_hit_latency_cycles", 300.0)

    @property
    def dram_latency(self) -> float:
        return self.mem("dram_latency_cycles", 700.0)

    @property
    def shared_latency(self) -> float:
        return self.mem("shared_latency_cycles", 30.0)

    def shared_path_cycles(self) -> tuple[float, float]:
        """(cycles the SM's shared-memory path takes per 128-byte wavefront of an access,
        cycles it takes for an access predicated off in every lane): this device's
        calibration (``shared_cycles_load_4``, ``shared_cycles_off_4``: warp accesses of 4
        bytes a lane back to back), else that of a calibrated device of the same
        architecture (the path is the SM's), else one cycle each. On an H200 an access of
        4, 8 or 16 bytes a lane took 1, 2 and 4 cycles, and one predicated off 1."""
        out = []
        for name in ("shared_cycles_load_4", "shared_cycles_off_4"):
            value = self.calibration.memory.get(name)
            if value is None:
                value = _same_architecture_figure(self.device.key, self.device.architecture,
                                                  name)
            out.append(float(value) if value else 1.0)
        return out[0], out[1]

    @property
    def atomic_latency(self) -> float:
        return self.mem("atomic_global_latency_cycles", 500.0)

    def dram_bytes_per_cycle(self) -> float:
        """Achieved DRAM bandwidth of the whole GPU (the mean of the calibrated read and
        write streams), bytes per SM clock."""
        read, write = self.mem("dram_read_gbs", 0.0), self.mem("dram_write_gbs", 0.0)
        gbs = (read + write) / 2 if read and write else \
            self.mem("dram_copy_gbs", 0.0) or 0.85 * self.device.memory.peak_bandwidth_gbs
        return gbs * 1e9 / self.clock_hz

    def dram_rates(self) -> tuple[float, float, float]:
        """Achieved DRAM bandwidth of the whole GPU for reads alone, writes alone and an
        even copy (bytes per SM clock); each the mean rate where not calibrated."""
        mean, per = self.dram_bytes_per_cycle(), 1e9 / self.clock_hz
        read, write, copy = (self.mem(key, 0.0) * per or mean
                             for key in ("dram_read_gbs", "dram_write_gbs", "dram_copy_gbs"))
        return read, write, copy

    def l1_fill_bytes_per_cycle(self) -> float:
        """The most an SM can take from the L2 per cycle (one 64-byte fill per cycle)."""
        return SM_L2_BYTES_PER_CYCLE

    def sm_dram_bytes_per_cycle(self) -> float:
        """The most DRAM bandwidth one SM can draw (its outstanding misses are limited)."""
        return SM_DRAM_BYTES_PER_CYCLE

    def partial_store_rates(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """(bytes written of each sector, sectors per cycle per SM) for warp-level stores
        that write part of each sector they touch (a naive transpose's column of 32
        words), ascending in bytes; from the calibration's scattered-store curve, else
        from that of a calibrated device of the same architecture (the rate belongs to
        the SM's store path and the L2 it feeds, which one architecture shares); None
        where neither has one."""
        curve = self.calibration.curves.get(STORE_CURVE)
        if not curve:
            curve = _same_architecture_curve(self.device.key, self.device.architecture,
                                             STORE_CURVE)[0]
        if not curve:
            return None
        by_piece: dict[float, list[float]] = {}
        for _, piece, rate in curve:
            if piece < 32 and rate > 0:
                by_piece.setdefault(float(piece), []).append(float(rate))
        if not by_piece:
            return None
        pieces = tuple(sorted(by_piece))
        return pieces, tuple(sum(by_piece[p]) / len(by_piece[p]) for p in pieces)

    def store_curve_source(self) -> str | None:
        """The calibration the scattered-store rates come from (this device's, else a
        calibrated device of the same architecture), or None where there are none."""
        if self.calibration.curves.get(STORE_CURVE):
            return self.calibration.device
        return _same_architecture_curve(self.device.key, self.device.architecture,
                                        STORE_CURVE)[1]

    def l2_bytes_per_cycle(self) -> float:
        gbs = self.mem("l2_read_gbs", 0.0) or 2.5 * self.device.memory.peak_bandwidth_gbs
        return gbs * 1e9 / self.clock_hz

    def barrier_cycles(self, warps: int) -> float:
        """Cycles from the last arrival of a block of ``warps`` warps at a barrier to its
        warps' release: the calibration's release figures
        (``barrier_release_cycles_<w>_warps``, ``tools/barrier_release.py``), else its
        measured periods of the barrier loop (``barrier_cycles_<w>_warps``), else a guess;
        the first figure of at least ``warps`` warps.

        A measured period is a whole iteration of the calibration's loop (an FMA, the
        barrier and the loop's own instructions, every warp issuing them); the simulation
        issues those itself, so a release figure is what the period leaves once the
        simulated loop's own cycles are taken out: simulating the loop with it takes the
        measured period. On an H200, the periods charged as releases made the simulated
        loop 1.6x (1 warp) to 1.4x (32 warps) the measured one."""
        for prefix in (RELEASE, MEASURED):
            known = barrier_figures(self.calibration.sync, prefix)
            if known:
                break
        if not known:
            return 20.0 + 2.0 * warps
        for w, cycles in known:
            if warps <= w:
                return cycles
        return known[-1][1]

    def launch_fixed_seconds(self) -> float:
        """The fixed cost of a launch (the calibration's intercept over grid sizes)."""
        launch = self.calibration.launch
        return float(launch.get("launch_overhead_s") or launch.get("empty_kernel_s") or 3.8e-6)

    def dispatch_seconds(self, blocks: int) -> float:
        """The least time the block scheduler needs to start and retire ``blocks``
        blocks (measured with empty blocks): over a whole grid a throughput bound that
        overlaps with execution; over a wave whose blocks end together, the time it takes
        to retire them after they end."""
        return float(self.calibration.launch.get("per_block_s", 0.0)) * blocks

    def block_turnaround(self, warps: int = 1) -> tuple[float, str | None]:
        """(cycles from the end of a block of ``warps`` warps to the start of the next
        block in its SM slot, the calibration they come from): this device's, else a
        calibrated device's of the same architecture (the SM's block launch belongs to the
        architecture); interpolated in the warps on the calibrated curve, else the figure
        of one-warp blocks; (0, None) where none has it."""
        curve = self.calibration.curves.get(TURNAROUND_CURVE)
        source: str | None = self.calibration.device
        if not curve and not self.calibration.launch.get(TURNAROUND):
            curve, source = _same_architecture_curve(self.device.key, self.device.architecture,
                                                     TURNAROUND_CURVE)
        if curve:
            points = np.asarray(curve, float)
            return float(np.interp(warps, points[:, 0], points[:, 1])), source
        own = self.calibration.launch.get(TURNAROUND)
        if own:
            return float(own), self.calibration.device
        return _borrowed_turnaround(self.device.key, self.device.architecture)

    def dram_load_latency(self) -> tuple[tuple[float, ...], tuple[float, ...], str] | None:
        """(shares of the DRAM's peak, cycles its latency grows by at each, the calibration
        they come from: the latency over its latency at the probe's lightest load, never
        below), from the loaded-latency probe of this device; None where its calibration
        has none. Unlike the SM's figures it is not borrowed from another device of the
        architecture: the DRAM (its type, stacks and controllers) is the device's own, and
        the H100's HBM3 and the H200's HBM3e differ.

        At each level of bytes in flight the probe's point with the most warps per SM
        counts (one load or few in flight per warp): a warp that keeps several loads in
        flight waits longer even at light load, a cost of the warp and not of the DRAM's
        load (docs/EVALUATION.md), which the curve is not to hold. Shares past
        :data:`SATURATED` are the queue of a saturated DRAM and are left out."""
        curve, source = self.calibration.curves.get(LOADED_CURVE), self.calibration.device
        if not curve:
            return None
        most: dict[float, tuple[float, float, float]] = {}
        for inflight, warps, gbs, cycles in curve:
            if inflight not in most or warps > most[inflight][0]:
                most[inflight] = (warps, gbs, cycles)
        peak = max(gbs for _, gbs, _ in most.values())
        points = sorted((gbs / peak, cycles) for _, gbs, cycles in most.values()
                        if gbs / peak <= SATURATED)
        if len(points) < 2:
            return None
        base = points[0][1]  # the latency at the lightest load
        return (tuple(u for u, _ in points),
                tuple(max(0.0, cycles - base) for _, cycles in points), source)

    def dram_spread(self) -> tuple[tuple[float, ...], str] | None:
        """(cycles a single DRAM read's latency lies off the mean at evenly spaced
        quantiles, the calibration they come from) from the spread probe
        (``kerncast calibrate --only spread``) of this device, else of a calibrated device
        of the same architecture, scaled by the ratio of the two DRAM latencies (the
        spread is the memory system's, its size relative to the latency is taken to carry
        over); None where neither has it. The mean DRAM latency stays the calibrated
        one: a block waits for its last warp, so the spread lengthens a block whose warps
        each wait on DRAM without moving the average load."""
        own = self.calibration.curves.get(SPREAD_CURVE)
        found = (own, self.dram_latency) if own else None
        source: str | None = self.calibration.device
        if not own:
            found, source = _same_architecture(
                self.device.key, self.device.architecture,
                lambda other: (other.curves[SPREAD_CURVE],
                               other.memory.get("dram_latency_cycles", 700.0))
                if other.curves.get(SPREAD_CURVE) else None)
        if not found or source is None:
            return None
        curve, latency = found
        cycles = np.array([c for _, c in curve], np.float64)
        scale = self.dram_latency / latency if latency > 0 else 1.0
        return tuple(((cycles - cycles.mean()) * scale).tolist()), source

    def borrowed(self) -> dict[str, str]:
        """The figures this machine takes from another calibration of its architecture
        (its own has none of them), each with the device whose calibration it is: the
        block slot's turnaround, the spread of DRAM reads' latencies and the scattered
        stores' rates."""
        own = self.calibration.device
        spread = self.dram_spread()
        found = {"the block slot's turnaround": self.block_turnaround()[1],
                 "the spread of single DRAM reads' latencies": spread[1] if spread else None,
                 "the scattered stores' rates": self.store_curve_source()}
        return {what: source for what, source in found.items()
                if source is not None and source != own}

    def launch_seconds(self, blocks: int) -> float:
        return self.launch_fixed_seconds() + self.dispatch_seconds(blocks)

    def atomic_rates(self) -> tuple[float, float]:
        """(contended, uncontended) global atomics per second, whole GPU."""
        return (self.mem("atomic_global_contended_per_s", 1.3e9),
                self.mem("atomic_global_uncontended_per_s", 5e11))

    def atomic_rate_over_lines(self, lines: int) -> float | None:
        """Global atomics per second, whole GPU, when each warp adds to the words of one
        line and the warps share ``lines`` lines (interpolated in log-log on the calibrated
        curve), or None where the calibration has no curve or ``lines`` lies past its last
        point (many lines: the uncontended rate bounds them)."""
        return self._rate_on("atomic_global_per_s_vs_lines", lines)

    def _rate_on(self, name: str, x: int) -> float | None:
        """The calibrated curve ``name`` at ``x``, interpolated in log-log; None without
        the curve or past its last point."""
        curve = self.calibration.curves.get(name)
        if not curve or x > curve[-1][0]:
            return None
        n, rate = np.log(np.asarray(curve, float)).T
        return float(np.exp(np.interp(np.log(max(x, 1)), n, rate)))

    def atomic_rate_over(self, addresses: int) -> float | None:
        """Global atomics per second, whole GPU, when they hit random words among
        ``addresses`` (interpolated in log-log on the calibrated curve), or None where
        the calibration has no curve or ``addresses`` lies past its last point."""
        return self._rate_on("atomic_global_per_s_vs_addresses", addresses)


def barrier_figures(sync: dict, prefix: str) -> list[tuple[int, float]]:
    """(warps, cycles) of a calibration's ``<prefix><w>_warps`` figures, by warps."""
    return sorted((int(k.removeprefix(prefix).split("_")[0]), float(v))
                  for k, v in sync.items() if k.startswith(prefix))


def _timings(cal: Calibration, schedulers: int, warp: int) -> tuple[dict, dict, dict]:
    issue, latency, pipe_of = {}, {}, {}
    for cls, (pipe, key) in _CLASS.items():
        timing = cal.instructions.get(key) or cal.instructions.get("fp32")
        per_scheduler = max(timing.throughput_per_clk_sm / schedulers, 1e-3)
        # whole cycles: a pipe accepts a warp every 1, 2, 4, 8... cycles (122.96 fp32
        # results per clock per SM measured is the 128 of the spec, less the loop overhead)
        issue[cls.value] = float(max(1, round(warp / per_scheduler)))
        latency[cls.value] = max(1.0, timing.latency_cycles)
        pipe_of[cls.value] = pipe
    return issue, latency, pipe_of


@lru_cache(maxsize=32)
def _same_architecture_curve(key: str, architecture: str,
                             name: str) -> tuple[list | None, str | None]:
    """(the curve ``name``, the device whose calibration has it) from another shipped
    calibration of ``architecture``; (None, None) where none has it."""
    return _same_architecture(key, architecture, lambda other: other.curves.get(name))


@lru_cache(maxsize=None)
def _same_architecture_figure(key: str, architecture: str, name: str) -> float | None:
    """The memory figure ``name`` of another shipped calibration of ``architecture``."""
    return _same_architecture(key, architecture, lambda other: other.memory.get(name))[0]


@lru_cache(maxsize=None)
def _borrowed_turnaround(key: str, architecture: str) -> tuple[float, str | None]:
    """The turnaround of another calibration of ``architecture`` (read once)."""
    found, source = _same_architecture(key, architecture,
                                       lambda other: other.launch.get(TURNAROUND))
    return (float(found), source) if found else (0.0, None)


def _same_architecture(key: str, architecture: str,
                       pick: Callable[[Calibration], Any]) -> tuple[Any, str | None]:
    """(what ``pick`` finds in another shipped calibration of ``architecture``, the
    device whose calibration it is); (None, None) where it finds nothing in any."""
    for path in sorted(CALIBRATION_DIR.glob("*.json")):
        if path.stem == key:
            continue
        try:
            other = get_device(path.stem)
        except Exception:  # noqa: BLE001 (a calibration of a device without a spec)
            continue
        if other.architecture == architecture:
            found = pick(load_calibration(path.stem))
            if found:
                return found, path.stem
    return None, None


def _spec_of(key: str) -> Device | None:
    """The spec of the device a calibration was measured on; None where kerncast has
    none (a calibration file of a device it does not know)."""
    try:
        return get_device(key)
    except InputError:
        return None


def _nearest_calibrated(device: Device) -> Device:
    calibrated = [get_device(p.stem) for p in CALIBRATION_DIR.glob("*.json")]
    if not calibrated:
        raise InputError("no calibration is shipped; run 'kerncast calibrate' on a GPU first")
    same_vendor = [d for d in calibrated if d.vendor == device.vendor] or calibrated

    def distance(d: Device) -> float:
        if device.arch_number is not None and d.arch_number is not None:
            return abs(device.arch_number - d.arch_number)
        return 0 if d.architecture == device.architecture else 100

    return min(same_vendor, key=distance)


#: the instruction classes an adapted calibration scales, by the spec's peak throughput of
#: each (class, :class:`~kerncast.devices.Device` ``throughput`` field)
SCALED_CLASSES = (("fp32", "fp32"), ("fp64", "fp64"), ("int", "int32"), ("sfu", "sfu"))


def _ratios(source: Device, target: Device) -> tuple[float, float, float]:
    """The specs' ratios of peak DRAM bandwidth, of boost clock and of SM count."""
    return (target.memory.peak_bandwidth_gbs / source.memory.peak_bandwidth_gbs,
            target.compute.boost_clock_mhz / source.compute.boost_clock_mhz,
            target.compute.sm_count / source.compute.sm_count)


def _adapt(cal: Calibration, source: Device, target: Device) -> Calibration:
    """Scale a calibration's bandwidths and per-SM throughputs to another spec
    (:func:`adaptation` says what this assumes)."""
    bw, clock, sms = _ratios(source, target)
    memory = dict(cal.memory)
    for key in ("dram_read_gbs", "dram_write_gbs", "dram_copy_gbs"):
        if key in memory:
            memory[key] = memory[key] * bw
    if "l2_read_gbs" in memory:
        memory["l2_read_gbs"] = memory["l2_read_gbs"] * clock * sms
    instructions = dict(cal.instructions)
    for cls, attr in SCALED_CLASSES:
        if cls in instructions:
            ratio = getattr(target.throughput, attr) / getattr(source.throughput, attr)
            old = instructions[cls]
            instructions[cls] = type(old)(old.latency_cycles, old.throughput_per_clk_sm * ratio)
    return Calibration(device=target.key, provenance=dict(cal.provenance), instructions=instructions,
                       memory=memory, curves=cal.curves, sync=cal.sync, launch=cal.launch,
                       adapted_from=source.key)


def adaptation(source: Device, target: Device) -> tuple[str, ...]:
    """What a prediction for ``target`` from ``source``'s calibration assumes, figure by
    figure (:func:`_adapt` scales the bandwidths and four instruction classes; the rest
    is carried over as measured)."""
    bw, clock, sms = _ratios(source, target)
    name = f"{source.key}'s"
    classes = ", ".join(
        f"{cls} x{getattr(target.throughput, attr) / getattr(source.throughput, attr):.3g}"
        for cls, attr in SCALED_CLASSES)
    return (
        f"DRAM read, write and copy bandwidths: {name} x{bw:.3g}, the specs' ratio of peak "
        "DRAM bandwidth",
        f"L2 bandwidth: {name} x{clock * sms:.3g}, the specs' ratio of boost clock times SM "
        "count",
        f"instruction throughput per SM cycle: {name} times the specs' ratio of peak "
        f"throughput for {classes}; every other class as on {source.key}",
        f"latencies (instructions, L1, L2, DRAM, shared memory, atomics): the same cycles "
        f"as on {source.key}",
        f"the DRAM's latency under load and the spread of single reads' latencies, the "
        f"shared-memory path, barriers, atomic rates and curves, scattered stores and L1 "
        f"gathers: {name} figures, unscaled, where its calibration has them",
        f"launch overhead, block dispatch and a block slot's turnaround: {name}",
        f"clock: the spec's boost clock, {target.compute.boost_clock_mhz:g} MHz (no clock "
        "was measured under load)",
        f"per SM, at most {SM_L2_BYTES_PER_CYCLE:g} bytes a cycle from the L2 and "
        f"{SM_DRAM_BYTES_PER_CYCLE:g} from DRAM (the static model's constants for every "
        "device)",
        "SM count, schedulers, occupancy limits, cache sizes and shared-memory carve-outs: "
        "the spec's",
    )


def _taken_as_is(cal: Calibration) -> tuple[str, ...]:
    """What a prediction assumes from another device's calibration it did not adapt."""
    if cal.adapted_from is not None:
        return (f"every figure: the calibration given, {cal.adapted_from}'s adapted to "
                f"{cal.device} before it was given",)
    return (f"every figure: {cal.device}'s calibration as it is, unscaled (kerncast has no "
            f"spec of {cal.device} to scale it from)",)


def machine_for(device: str | Device, calibration: str | Calibration | None = None) -> Machine:
    """The simulator's machine for ``device`` (its own calibration, or an adapted one)."""
    dev = get_device(device)
    adapted = None
    assumptions: tuple[str, ...] = ()
    if isinstance(calibration, Calibration):
        cal = calibration
    elif calibration is not None:
        cal = load_calibration(calibration)
        source = _spec_of(cal.device)
        if cal.device != dev.key and cal.adapted_from is None and source is not None:
            cal = _adapt(cal, source, dev)  # another device's figures, scaled to this spec
            adapted, assumptions = source.key, adaptation(source, dev)
    elif (CALIBRATION_DIR / f"{dev.key}.json").exists():
        cal = load_calibration(dev.key)
    else:
        source = _nearest_calibrated(dev)
        cal = _adapt(load_calibration(source.key), source, dev)
        adapted, assumptions = source.key, adaptation(source, dev)
    if not assumptions and (cal.device != dev.key or cal.adapted_from is not None):
        assumptions = _taken_as_is(cal)
    if cal.device != dev.key and adapted is None and cal.adapted_from is None:
        adapted = cal.device
    seen = cal.provenance.get("sm_clock_mhz_seen")
    clock = float(seen) if seen and not (adapted or cal.adapted_from) else dev.compute.boost_clock_mhz
    schedulers = dev.compute.schedulers_per_sm
    warp = dev.compute.warp_size
    issue, latency, pipe_of = _timings(cal, schedulers, warp)
    return Machine(device=dev, calibration=cal, adapted_from=adapted or cal.adapted_from,
                   clock_hz=clock * 1e6, schedulers=schedulers, issue=issue, latency=latency,
                   pipe_of=pipe_of, sequence={k.value: v for k, v in _SEQUENCE.items()},
                   alu_cycles=max(1.0, warp / (dev.throughput.int32 / schedulers)),
                   heavy_cycles=issue[InstrClass.INT_MUL.value], assumptions=assumptions)


def calibrated_devices() -> list[str]:
    """Keys of the devices with a shipped calibration."""
    known = {d.key for d in list_devices()}
    return sorted(p.stem for p in CALIBRATION_DIR.glob("*.json") if p.stem in known)
