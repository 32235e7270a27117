"""``kerncast.split``: one launch's grid run across several devices, divided by what
samples on each device predict.

The sampling seed's purpose (Section 1 of its paper): a small part of the workload runs
on every device first, the samples predict each device's throughput, and the rest of the
grid is divided so that every device finishes at the same time. Here:

1. the grid is cut into *slices* along its last dimension of more than one block (whole
   rows of a 2-D grid, whole planes of a 3-D one, blocks of a 1-D one);
2. each device gets its own copy of the arguments. A grid of fewer than
   :data:`SHORT_WAVES` waves of all the devices' resident blocks together is divided in
   proportion to the blocks each device holds at once: a sample of it would take as long
   as a wave, a large part of the whole. Devices of different kinds (a GPU and a CPU)
   are first probed (not kept): one slice, then doubling slices until a launch takes
   50 µs, which ranks them by their time per slice. On a short grid, the fastest then
   times the whole grid and the others are weighted by their probe's rate; on a long
   one, the fastest is sampled first, and a device whose one slice takes longer than the
   fastest's prediction for the whole rest is left out. Where the probes give the other
   devices less than 5% of the grid (the fastest's whole grid at its probe's rate, the
   others' by the lines through their probes), nothing is sampled and the fastest runs
   the grid alone, in one launch. Otherwise each device runs
   samples of whole waves (one wave of its resident blocks, then doubling, until a
   sample takes 200 µs on a GPU or 20 times its first on a CPU, or covers 5% of the
   grid, or half its equal share) on a region of slices of its own, each timed three
   times by the device's timer; a line ``a + b s`` through them
   (:mod:`kerncast.split._plan`) predicts its time for ``s`` slices. A slower device of
   another kind samples from one slice, stops before a sample would take half the
   fastest's predicted rest, and does not keep its samples;
3. the samples' blocks count as done (each device keeps what its largest sample wrote)
   unless the kernel has ``inout`` buffers, which repeated samples would have updated
   several times: then every buffer is restored and the whole grid divided;
4. the remaining slices are divided so that the predicted parts, kept samples included,
   end together. Where the devices are of different kinds, each slower device's share is
   run once first (its outputs put back) and cut until it ends within 5% of the fastest's
   part, or left out: a CPU's one slice or few understate what many cost. Each
   device runs its share in one launch, timed by its own timer (the devices run one
   after the other); the makespan is the longest device's time on the workload, its
   kept sample and its share, as if the devices had sampled and run at once; the wall
   time of all the sampling (smaller samples and repeats included) is reported beside
   it;
5. the outputs are gathered: each device's changed elements are its blocks' (an element
   that two devices change to different values means the blocks' outputs overlap, and
   the kernel cannot be split), and compared with the whole grid run on the first
   device alone.

A device runs a slice through a block offset (:mod:`kerncast.frontend`'s offsets): CUDA
devices run the kernel's PTX rewritten to read ``%ctaid`` plus an offset parameter,
OpenCL devices the OpenCL C source with a prelude and a global work offset.

Baselines (``baselines=True``), each measured the same way from the whole grid: the
split in equal parts, the split by peak floating-point rate, each device alone, and for
two devices the oracle split (the best of fractions in steps of 10%, then 2% around it,
leaving out fractions where either device's part alone, at 80% of its rate alone, would
take longer than the best so far; the fraction found is timed again, since the lowest of
many timings is low by their spread). A launch of 50 ms or more is timed once.

Refused, with the reason: kernels with global atomics (the order of updates from
different devices is not kept, and each device's copy would hold part of the sums), and
grids of fewer slices than twice the devices.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core import Kernel, Launch
from kerncast.frontend import offset_kernel
from kerncast.split._plan import Line, balanced_shares, fit_line, proportional_shares
from kerncast.devices import get_device

__all__ = ["Part", "SplitResult", "split"]

REPEATS = 3
#: A grid of fewer waves of the devices' resident blocks (all together) is not sampled.
SHORT_WAVES = 4
SAMPLE_SHARE = 0.05
GPU_SAMPLE_S = 200e-6
CPU_SAMPLE_MULTIPLE = 20
#: A launch this long is timed once: its repeats would differ by less than they cost.
LONG_S = 0.05


@dataclass
class Part:
    """One device's share of the grid: slices ``[first, first + slices)``."""

    device: str
    name: str
    first: int
    slices: int
    sampled: int
    sample_s: float
    predicted_s: float
    measured_s: float
    line: Line | None
    #: the first slice of the device's kept sample
    sample_first: int = 0

    @property
    def busy_s(self) -> float:
        """The device's time on the workload: its kept sample and its share."""
        return self.sample_s + self.measured_s

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "name": self.name, "first": self.first,
                "slices": self.slices, "sampled_slices": self.sampled,
                "sample_s": self.sample_s, "predicted_s": self.predicted_s,
                "measured_s": self.measured_s, "busy_s": self.busy_s,
                "fixed_s": self.line.fixed_s if self.line else None,
                "per_slice_s": self.line.per_slice_s if self.line else None}


@dataclass
class SplitResult:
    """A split launch: each device's part, the makespan and what it is compared with."""

    kernel: str
    axis: str
    slices: int
    blocks_per_slice: int
    parts: list[Part]
    sampling_s: float
    samples_reused: bool
    checked: str
    baselines: dict[str, float] = field(default_factory=dict)
    oracle_fraction: float | None = None
    #: how the grid was divided
    divided: str = ""
    #: every out and inout buffer as the devices wrote it together
    outputs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def makespan_s(self) -> float:
        """The longest device's time on the workload: its kept sample and its share (the
        devices sampling at once; the smaller samples and repeats are in
        :attr:`sampling_s`)."""
        return max((p.busy_s for p in self.parts), default=0.0)

    @property
    def sampled(self) -> bool:
        """Whether any device was sampled (not where the grid was divided without)."""
        return any(p.line is not None for p in self.parts)

    @property
    def predicted_makespan_s(self) -> float:
        """NaN where the grid was not sampled."""
        return max((p.sample_s + p.predicted_s for p in self.parts), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "axis": self.axis, "slices": self.slices,
                "blocks_per_slice": self.blocks_per_slice,
                "parts": [p.to_dict() for p in self.parts], "makespan_s": self.makespan_s,
                "predicted_makespan_s": self.predicted_makespan_s,
                "sampling_s": self.sampling_s, "samples_reused": self.samples_reused,
                "checked": self.checked, "divided": self.divided, "baselines": self.baselines,
                "oracle_fraction": self.oracle_fraction}


# -- the grid's slices --------------------------------------------------------------------

def _axis(grid: tuple[int, int, int]) -> int:
    """The last dimension of more than one block (x for a single block)."""
    return next((d for d in (2, 1, 0) if grid[d] > 1), 0)


# -- one device ---------------------------------------------------------------------------

class _Device:
    """A backend with the kernel built for slices and its own copy of the arguments."""

    def __init__(self, spec: str, kernel: Kernel, launch: Launch, host: dict[str, Any],
                 outputs: list[str], axis: int):
        self.spec, self.launch, self.host, self.outputs, self.axis = \
            spec, launch, host, outputs, axis
        self.backend = _backend(spec)
        self.backend.activate()
        self.compiled = self.backend.compile(_sliced_kernel(kernel, launch, self.backend))
        from kerncast.measure import upload_args  # noqa: PLC0415 (measure on use)

        self.dev = upload_args(self.backend, host)
        self.name = str(self.backend.describe().get("device_name") or spec)

    def _slice(self, first: int, count: int) -> Launch:
        from kerncast.measure import offset_slice  # noqa: PLC0415 (measure on use)

        grid = list(self.launch.grid)
        grid[self.axis] = count
        offset = [0, 0, 0]
        offset[self.axis] = first
        return offset_slice(self.backend, self.dev, self.launch, (offset[0], offset[1], offset[2]),
                            (grid[0], grid[1], grid[2]))

    def time(self, first: int, count: int, repeats: int = 1) -> float:
        """Seconds of slices ``[first, first + count)`` by the device's timer (the median
        of ``repeats`` launches; one where the first takes :data:`LONG_S` or more)."""
        self.backend.activate()
        launch = self._slice(first, count)
        times = [self.backend.time_launch(self.compiled, launch, self.dev)]
        while len(times) < repeats and times[0] < LONG_S:
            times.append(self.backend.time_launch(self.compiled, launch, self.dev))
        return float(np.median(times))

    def restore(self, saved: dict[str, np.ndarray] | None = None) -> None:
        """Every output buffer as it was before any launch, or as ``saved`` (a
        :meth:`download`) holds it."""
        self.backend.activate()
        for name in self.outputs:
            values = self.host[name] if saved is None else saved[name]
            self.backend.write(self.dev[name], np.ascontiguousarray(values))
        self.backend.synchronize()

    def download(self) -> dict[str, np.ndarray]:
        self.backend.activate()
        return self.backend.download(self.dev, {n: self.host[n] for n in self.outputs})

    def resident_slices(self, blocks_per_slice: int) -> int:
        """Slices in one wave of the device's resident blocks."""
        from kerncast.measure import resident_blocks  # noqa: PLC0415 (measure on use)

        per_sm = resident_blocks(self.backend, self.launch, self.compiled.resources.columns())
        return max(1, math.ceil(max(per_sm, 1) * self.backend.sm_count / blocks_per_slice))

    def peak_flops(self) -> float | None:
        """The device's peak fp32 rate: the spec of a GPU, or an OpenCL CPU's compute
        units x clock x float vector width x 2 (a fused multiply-add)."""
        if self.backend.kind == "gpu":
            try:
                return get_device(self.backend.device_key).peak_fp32_gflops * 1e9
            except InputError:
                return None
        device = getattr(self.backend, "device", None)
        if device is None:
            return None
        return (float(device.max_compute_units) * float(device.max_clock_frequency) * 1e6
                * 2 * float(device.preferred_vector_width_float))

    def close(self) -> None:
        self.backend.free(self.dev)
        self.backend.close()


def _backend(spec: str):
    """``cupy``, ``cupy:N`` (GPU N), ``opencl`` (NVIDIA's OpenCL GPU), ``pocl`` (this CPU),
    or ``module:factory``."""
    from kerncast.measure import BACKEND_KINDS, make_backend  # noqa: PLC0415 (on use)

    kind, _, rest = spec.partition(":")
    if kind in BACKEND_KINDS and rest:
        if not rest.isdigit():
            raise InputError(f"device {spec!r}: after {kind}: give the GPU's index (cupy:1)")
        return make_backend(kind, index=int(rest))
    return make_backend(spec)


def _sliced_kernel(kernel: Kernel, launch: Launch, backend) -> Kernel:
    """The kernel as ``backend`` runs a slice of ``launch``: PTX with block offsets for a
    CUDA backend, OpenCL C with the prelude for an OpenCL one."""
    if backend.language != "cuda" and kernel.language != "opencl":
        raise InputError(f"{backend.name} runs OpenCL C and {kernel.name} is {kernel.language}; "
                         "split it across CUDA devices (cupy, cupy:1), or give its OpenCL "
                         "version")
    return offset_kernel(kernel, launch, backend.language, backend.device_key or "h100")


def _refuse_atomics(kernel: Kernel) -> None:
    from kerncast.frontend import build  # noqa: PLC0415 (on use: the compiler)

    tu = build(kernel, "h100")
    function = tu.module.kernel(tu.kernel(kernel.name).entry)
    for instr in function.instructions:
        if instr.opcode in ("atom", "red") and instr.space in (None, "global"):
            raise InputError(f"{kernel.name} updates global memory atomically ({instr.name}): "
                             "devices that each hold a copy of the buffers would each keep "
                             "part of the updates; it cannot be split")


# -- the split ----------------------------------------------------------------------------

def split(kernel: Kernel, launch: Launch, devices: Sequence[str], *, baselines: bool = False,
          check: bool = True, progress: Callable[[str], None] | None = None) -> SplitResult:
    """Run ``launch`` of ``kernel`` across ``devices`` (see the module): samples on each,
    the rest of the grid divided by their predicted throughput, the outputs gathered and
    checked against the first device alone; with ``baselines``, the equal, peak-rate,
    single-device and (two devices) oracle splits measured too."""
    say = progress or (lambda text: None)
    if len(devices) < 2:
        raise InputError("give at least two devices to split across (e.g. cupy,pocl or "
                         "cupy:0,cupy:1)")
    axis = _axis(launch.grid)
    slices = launch.grid[axis]
    if slices < 2 * len(devices):
        raise InputError(f"the grid has {slices} slice(s) along {'xyz'[axis]}, too few to "
                         f"split across {len(devices)} devices; give a larger grid")
    _refuse_atomics(kernel)
    host, intents = _arguments(kernel, launch)
    outputs = [n for n, i in intents.items() if i in ("out", "inout")]
    say("building the kernel and uploading its arguments on each device")
    runners = [_Device(spec, kernel, launch, host, outputs, axis) for spec in devices]
    try:
        return _run(kernel, launch, runners, axis, host, intents, baselines, check, say)
    finally:
        for runner in runners:
            runner.close()


def _arguments(kernel: Kernel, launch: Launch) -> tuple[dict[str, Any], dict[str, str]]:
    from kerncast.measure import user_job  # noqa: PLC0415 (measure on use)

    job = user_job(kernel, launch)
    return job.prepare(reference=False).args, dict(job.intents)


def _run(kernel: Kernel, launch: Launch, runners: list[_Device], axis: int,
         host: dict[str, Any], intents: dict[str, str], baselines: bool, check: bool,
         say: Callable[[str], None]) -> SplitResult:
    slices = launch.grid[axis]
    per_slice = math.prod(launch.grid) // slices
    reuse = "inout" not in intents.values()
    started = time.perf_counter()
    waves = [r.resident_slices(per_slice) for r in runners]
    n = len(runners)
    ladders = None if _alike(runners) else [_probe(r, max(1, slices // (2 * n)))
                                             for r in runners]
    probes = None if ladders is None else [one for one, _, _ in ladders]
    rates = None if ladders is None else [per for _, per, _ in ladders]
    lines: list[Line | None] = [None] * n
    sampled, kept, starts = [0] * n, [0.0] * n, [0] * n
    cursor = 0
    outrun = None if ladders is None or rates is None else \
        _outruns([line for _, _, line in ladders], rates, slices)
    if outrun is not None:
        how, shares = _alone(runners, *outrun, slices)
    elif slices < SHORT_WAVES * sum(waves) and probes is None:
        how = (f"not sampled: the grid is {slices / sum(waves):.1f} waves of the devices' "
               f"resident blocks together, fewer than {SHORT_WAVES}: divided by them")
        shares = proportional_shares([float(w) for w in waves], slices)
    elif slices < SHORT_WAVES * sum(waves) and probes is not None and rates is not None:
        how, shares, fastest_s = _short_unlike(runners, probes, rates, slices)
        how += _verify(runners, shares, rates, cursor, kept, fastest_s, say)
    else:
        how, shares, cursor = _by_samples(runners, slices, waves, probes, rates, reuse,
                                          (lines, sampled, kept, starts), say)
    sampling_s = time.perf_counter() - started
    say("running each device's share")
    parts, first = [], cursor
    for runner, line, share, own, own_s, start in zip(runners, lines, shares, sampled, kept,
                                                      starts):
        measured = runner.time(first, share) if share else 0.0
        predicted = line.seconds(share) if line is not None else math.nan
        parts.append(Part(runner.spec, runner.name, first, share, own, own_s, predicted,
                          measured, line, start))
        first += share
    merged = _merged(host, [r.download() for r in runners], list(runners[0].outputs))
    checked = _check(runners[0], merged, slices, probes is not None) if check else \
        "not checked"
    result = SplitResult(kernel.name, "xyz"[axis], slices, per_slice, parts, sampling_s,
                         reuse and lines[0] is not None, checked, divided=how, outputs=merged)
    if baselines:
        say("measuring the baselines")
        result.baselines, result.oracle_fraction = _baselines(runners, slices)
        result.baselines["kerncast (warm)"] = _warm(runners, parts)
    return result


def _by_samples(runners: list[_Device], slices: int, waves: list[int],
                probes: list[float] | None, rates: list[float] | None, reuse: bool,
                state: tuple[list[Line | None], list[int], list[float], list[int]],
                say: Callable[[str], None]) -> tuple[str, list[int], int]:
    """A long grid: each device sampled in turn, fastest first (see the module), and the
    rest divided by the lines through the samples. Fills ``state`` (each device's line,
    kept slices, kept seconds and first kept slice); returns how the grid was divided,
    the shares and the first slice after the kept samples."""
    lines, sampled, kept, starts = state
    n = len(runners)
    how, cursor = "by the samples' throughput", 0
    order = sorted(range(n), key=lambda i: rates[i]) if rates else list(range(n))
    for i in order:
        runner = runners[i]
        if probes and i != order[0]:  # from one slice, ending before the fastest would
            rest_s = _fastest_s(lines[order[0]], kept[order[0]], slices - cursor)
            if probes[i] >= rest_s:
                how += f"; {runner.spec} left out: one slice takes it longer than the rest"
                continue
            say(f"sampling {runner.spec}")
            lines[i] = fit_line(_samples(runner, cursor, slices, 1, n, limit_s=rest_s / 2))
            runner.restore()  # not kept: a CPU's few slices may cost more than timed
            continue
        say(f"sampling {runner.spec}")
        samples = _samples(runner, cursor, slices, waves[i], n)
        lines[i] = fit_line(samples)
        starts[i] = cursor
        sampled[i] = samples[-1][0] if reuse else 0
        kept[i] = samples[-1][1] if reuse else 0.0
        cursor += sampled[i]
    if not reuse:
        for runner in runners:
            runner.restore()
    fitted = [(i, line) for i, line in enumerate(lines) if line is not None]
    # a device that kept its sample is busy that long before its share starts
    divided = balanced_shares([Line(line.fixed_s + kept[i], line.per_slice_s)
                               for i, line in fitted], slices - cursor)
    shares = [0] * n
    for (i, _), share in zip(fitted, divided):
        shares[i] = share
    if rates:
        lead = order[0]
        how += _verify(runners, shares, rates, cursor, kept,
                       lambda k: _fastest_s(lines[lead], kept[lead], k), say)
    return how, shares, cursor


def _warm(runners: list[_Device], parts: list[Part]) -> float:
    """kerncast's split timed as the baselines are (the median of repeated launches on
    warm devices): each device's kept sample and its share, the longest."""
    longest = 0.0
    for runner, part in zip(runners, parts):
        busy = runner.time(part.sample_first, part.sampled, REPEATS) if part.sampled else 0.0
        if part.slices:
            busy += runner.time(part.first, part.slices, REPEATS)
        longest = max(longest, busy)
    return longest


def _alike(runners: list[_Device]) -> bool:
    """Devices of one kind and name: their resident blocks compare their speeds."""
    return len({(r.backend.kind, r.name) for r in runners}) == 1


#: A probe doubles its slices until a launch takes this long (or half an equal share).
PROBE_S = 50e-6


def _probe(runner: _Device, most: int) -> tuple[float, float, Line]:
    """The seconds of one slice on ``runner`` (its fixed cost and a slice: the least a
    share can cost), the seconds per slice of a launch of doubling slices that takes
    :data:`PROBE_S` or ``most`` slices, and the line through the two; its buffers
    restored after. The cheapest comparison of devices of different kinds: a CPU's timer
    may report a fraction of what each slice costs in a larger launch, so one slice alone
    does not rank it."""
    count, one = 1, runner.time(0, 1, REPEATS)
    seconds = one
    while seconds < PROBE_S and count < most:
        count = min(2 * count, most)
        seconds = runner.time(0, count, REPEATS)
    runner.restore()
    return one, seconds / count, fit_line([(1, one), (count, seconds)])


def _short_unlike(runners: list[_Device], probes: list[float], rates: list[float],
                  slices: int) -> tuple[str, list[int], Callable[[int], float]]:
    """A short grid over devices of different kinds: the device fastest per slice in its
    probe times the whole grid (restored after); a device whose one slice takes longer
    than that gets none; the others are weighted by their probes' rate."""
    fastest = min(range(len(runners)), key=lambda i: rates[i])
    whole = runners[fastest].time(0, slices, REPEATS)
    runners[fastest].restore()
    weights = [slices / whole if i == fastest else (1.0 / per if one < whole else 0.0)
               for i, (one, per) in enumerate(zip(probes, rates))]
    left = [r.spec for r, weight in zip(runners, weights) if weight == 0.0]
    how = (f"not sampled: a short grid on unlike devices, divided by a probe on each and "
           f"the whole grid on {runners[fastest].spec}")
    if left:
        how += f"; {', '.join(left)} left out: one slice takes longer than the whole grid there"
    return how, proportional_shares(weights, slices), lambda k: whole * k / slices


def _outruns(lines: list[Line], rates: list[float], slices: int) -> tuple[int, float] | None:
    """The device fastest per slice in its probe and the share of the grid the others
    would take, where that share would save it less than :data:`VERIFY_GAIN` of its
    time; else None. The fastest's whole grid is taken at its probe's rate (an upper
    bound: the rate carries the probe's launch cost), the others' by the lines through
    their probes (a lower bound: a CPU's one slice understates what many cost), so the
    others' share is if anything too large. Such a grid is run by the fastest alone, in
    one launch: a sample it kept would only add a launch to its part."""
    fastest = min(range(len(rates)), key=lambda i: rates[i])
    bound = [Line(0.0, rates[i]) if i == fastest else line for i, line in enumerate(lines)]
    given = 1.0 - balanced_shares(bound, slices)[fastest] / slices
    return (fastest, given) if given < VERIFY_GAIN else None


def _alone(runners: list[_Device], lead: int, given: float,
           slices: int) -> tuple[str, list[int]]:
    """The whole grid to ``runners[lead]``, and why (see :func:`_outruns`)."""
    others = ", ".join(r.spec for i, r in enumerate(runners) if i != lead)
    how = (f"not sampled: {runners[lead].spec} alone, in one launch; {others} left out: "
           f"their probes give them {given:.1%} of the grid, which would save "
           f"{runners[lead].spec} less than {VERIFY_GAIN:.0%}")
    return how, [slices if i == lead else 0 for i in range(len(runners))]


def _fastest_s(line: Line | None, kept_s: float, slices: int) -> float:
    """The fastest device's predicted time for ``slices`` more, its kept sample included."""
    return math.inf if line is None else kept_s + line.seconds(slices)


#: A slower device's share is kept when it runs within this factor of the fastest's part.
VERIFY_SLACK = 1.05
VERIFY_TRIES = 3
#: A slower device takes a share only where it saves the fastest this much of its time:
#: a smaller gain is lost in the noise of the slower device's launch.
VERIFY_GAIN = 0.05


def _verify(runners: list[_Device], shares: list[int], rates: list[float], cursor: int,
            kept: list[float], fastest_s: Callable[[int], float],
            say: Callable[[str], None]) -> str:
    """Run each slower device's share once (its outputs put back after) and shrink it
    until the device, its kept sample included, ends within :data:`VERIFY_SLACK` of the
    fastest device's part; its slices go to the fastest. A CPU's time for one slice or a
    few understates its time for many. Changes ``shares``; returns what it did, for
    :attr:`SplitResult.divided`."""
    fastest = min(range(len(runners)), key=lambda i: rates[i])
    notes = []
    for i, runner in enumerate(runners):
        if i == fastest or not shares[i]:
            continue
        alone = fastest_s(shares[fastest] + shares[i])
        if alone - fastest_s(shares[fastest]) < VERIFY_GAIN * alone:
            notes.append(f"{runner.spec} left out: its {shares[i]} slice(s) would save the "
                         f"fastest less than {VERIFY_GAIN:.0%}")
            shares[fastest] += shares[i]
            shares[i] = 0
            continue
        saved = runner.download()
        tries = 0
        while shares[i] and tries < VERIFY_TRIES:
            say(f"checking {runner.spec}'s share of {shares[i]} slice(s)")
            took = kept[i] + runner.time(cursor + sum(shares[:i]), shares[i], REPEATS)
            runner.restore(saved)
            allowed = VERIFY_SLACK * fastest_s(shares[fastest])
            if took <= allowed:
                break
            tries += 1
            smaller = int(shares[i] * 0.9 * allowed / took) if tries < VERIFY_TRIES else 0
            notes.append(f"{runner.spec} took {took * 1e6:.0f} µs for {shares[i]} slice(s) "
                         f"against the fastest's {allowed / VERIFY_SLACK * 1e6:.0f} µs: "
                         f"{'cut to ' + str(smaller) if smaller else 'left out'}")
            shares[fastest] += shares[i] - smaller
            shares[i] = smaller
    return "".join(f"; {note}" for note in notes)


def _samples(runner: _Device, start: int, slices: int, wave: int, devices: int,
             limit_s: float = math.inf) -> list[tuple[int, float]]:
    """(slices, seconds) of growing samples of whole waves from slice ``start`` (see the
    module); none after one that took half of ``limit_s`` or more."""
    room = max(1, slices // (2 * devices))
    cap = min(room, max(wave, math.ceil(SAMPLE_SHARE * slices)))
    out: list[tuple[int, float]] = []
    size = min(wave, cap)
    while True:
        seconds = runner.time(start, size, REPEATS)
        out.append((size, seconds))
        target = GPU_SAMPLE_S if runner.backend.kind == "gpu" else \
            CPU_SAMPLE_MULTIPLE * out[0][1]
        if size >= cap or (len(out) >= 2 and seconds >= target) or 2 * seconds >= limit_s:
            return out
        size = min(2 * size, cap)


def _as_words(array: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.itemsize in (1, 2, 4, 8):
        return flat.view(f"u{flat.dtype.itemsize}")
    return flat.view(np.uint8)


def _merged(host: dict[str, Any], outs: list[dict[str, np.ndarray]],
            names: list[str]) -> dict[str, np.ndarray]:
    """Each output: the elements each device changed from the arguments as given."""
    merged = {}
    for name in names:
        base = _as_words(host[name])
        result = base.copy()
        owner = np.full(base.shape, -1)
        for device, out in enumerate(outs):
            got = _as_words(out[name])
            changed = got != base
            clash = changed & (owner >= 0) & (result != got)
            if clash.any():
                where = int(np.flatnonzero(clash)[0])
                raise InputError(f"two devices wrote different values to {name}[{where}]: the "
                                 "blocks of this kernel do not write disjoint outputs, so it "
                                 "cannot be split")
            result[changed] = got[changed]
            owner[changed] = device
        merged[name] = result.view(np.ascontiguousarray(host[name]).dtype).reshape(
            np.shape(host[name]))
    return merged


def _check(runner: _Device, merged: dict[str, np.ndarray], slices: int,
           unlike: bool = False) -> str:
    """Compare the gathered outputs with the whole grid run on ``runner`` alone. Floating
    point within 1e-5 relative (1e-6 absolute); where the devices are of different kinds,
    whose math libraries round differently, within 1e-4 relative or 1e-5 of the output's
    largest magnitude."""
    runner.restore()
    runner.time(0, slices)
    alone = runner.download()
    for name, want in alone.items():
        got = merged[name]
        if want.dtype.kind == "f":
            scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
            rtol, atol = (1e-4, 1e-5 * max(scale, 1e-30)) if unlike else (1e-5, 1e-6)
            close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = _as_words(got) == _as_words(want)
        if not np.all(close):
            raise InputError(_difference(name, runner.spec, got, want, close))
    return f"outputs match {runner.spec} running the whole grid alone"


def _difference(name: str, spec: str, got: np.ndarray, want: np.ndarray,
                close: np.ndarray) -> str:
    wrong = int(np.size(close) - np.count_nonzero(close))
    where = int(np.flatnonzero(~np.asarray(close).reshape(-1))[0])
    values = f"{got.reshape(-1)[where]!r} against {want.reshape(-1)[where]!r}"
    return (f"the split's {name} differs from {spec} running the whole grid alone at {wrong} "
            f"of {np.size(close)} elements (first at [{where}]: {values}): the kernel's blocks "
            "depend on each other (or on the grid's size beyond gridDim), so it cannot be split")


def _makespan(runners: list[_Device], shares: list[int]) -> float:
    first, longest = 0, 0.0
    for runner, share in zip(runners, shares):
        if share:
            longest = max(longest, runner.time(first, share, REPEATS))
        first += share
    return longest


def _baselines(runners: list[_Device], slices: int) -> tuple[dict[str, float], float | None]:
    out = {"equal": _makespan(runners, proportional_shares([1.0] * len(runners), slices))}
    peaks = [r.peak_flops() for r in runners]
    if all(p is not None for p in peaks):
        out["peak"] = _makespan(runners, proportional_shares([float(p or 0) for p in peaks],
                                                             slices))
    for runner in runners:
        out[f"alone:{runner.spec}"] = runner.time(0, slices, REPEATS)
    if len(runners) != 2:
        return out, None
    out["oracle"], fraction = _oracle(runners, [out[f"alone:{r.spec}"] for r in runners],
                                      slices)
    return out, fraction


def _oracle(runners: list[_Device], alone: list[float], slices: int) -> tuple[float, float]:
    """The best split of two devices: fractions in steps of 10%, then 2% around the best,
    each share timed once (the devices alone are the fractions 0 and 1), leaving out the
    :func:`_hopeless`; the best fraction is then timed again, as kerncast's split is (the
    lowest of many noisy timings is low by their spread). Its seconds and fraction."""
    timed = {slices: alone[0], 0: alone[1]}  # the first device's slices -> seconds

    def candidate(fraction: float) -> None:
        first = _two(fraction, slices)[0]
        if first not in timed and not _hopeless(fraction, alone, min(timed.values())):
            timed[first] = _makespan(runners, [first, slices - first])

    for fraction in np.linspace(0, 1, 11):
        candidate(float(fraction))
    around = min(timed, key=lambda k: timed[k]) / slices
    for fraction in np.clip(around + np.linspace(-0.1, 0.1, 11), 0, 1):
        candidate(float(fraction))
    best = min(timed, key=lambda k: timed[k])
    return _makespan(runners, [best, slices - best]), best / slices


#: A device's time for a fraction of the grid is taken to be at least this share of the
#: fraction of its time alone (a smaller part fills its cores no better).
HOPELESS_BOUND = 0.8


def _hopeless(fraction: float, alone: list[float], best: float) -> bool:
    """Whether giving the first device ``fraction`` of the grid (the second the rest)
    cannot beat ``best``: either part alone would take longer. Saves the oracle search
    the fractions that give a slow CPU most of a grid."""
    parts = (fraction, 1.0 - fraction)
    return any(HOPELESS_BOUND * p * a >= best for p, a in zip(parts, alone) if p > 0)


def _two(fraction: float, slices: int) -> list[int]:
    first = int(round(fraction * slices))
    return [first, slices - first]
