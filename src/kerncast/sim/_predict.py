"""Static prediction of one launch: compile, emulate one round, simulate, scale.

1. compile the kernel for the device (``kerncast.compile``) and read its registers
   and shared memory (ptxas); the occupancy calculator gives the blocks resident
   per SM (Psat);
2. emulate, with the launch's real arguments, the blocks SM 0 holds in the first
   round (blocks 0, S, 2S, ... on S SMs: they sample the grid evenly);
3. cost every memory request of that round (L1 model, L2 or DRAM, bank conflicts)
   and simulate the round on the warp pipeline;
4. scale to the grid: ``full waves x round time + tail-wave time`` (the tail, a
   partial last wave, is simulated with the blocks per SM it holds), plus the
   calibrated launch overhead and per-block cost.

Nothing here reads a measurement of the kernel: the only hardware inputs are the
device spec and the calibration.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, LaunchConfig, make_args
from kerncast.devices import Device, get_device, occupancy
from kerncast.sim._machine import Machine, machine_for
from kerncast.sim._memory import request_costs
from kerncast.sim._pipeline import RoundResult, build_table, simulate_round

__all__ = ["StaticResult", "predict_launch"]


@dataclass
class StaticResult:
    """A static prediction with what it rests on."""

    seconds: float
    breakdown: dict[str, float]
    bottleneck: str
    based_on: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=64)
def _compiled(path: str, language: str, arch: str, defines: tuple) -> tuple:
    from kerncast.frontend import compile as compile_source  # noqa: PLC0415

    tu = compile_source(path, lang=language, arch=arch, defines=dict(defines))
    return tu, tu.module


@lru_cache(maxsize=2)
def _args(kernel_name: str, size: str, tunables: tuple, seed: int) -> dict:
    from kerncast.corpus import get_kernel  # noqa: PLC0415

    kernel = get_kernel(kernel_name)
    return make_args(kernel, kernel.launch(size, dict(tunables)), seed=seed)


def _inputs(kernel: CorpusKernel, config: LaunchConfig, seed: int) -> dict:
    # Inputs depend on the size only for most kernels; reuse them across configurations
    # unless the buffers' shapes differ (they depend on tunables for a few kernels).
    args = _args(kernel.name, config.size, tuple(sorted(config.tunables.items())), seed)
    return args


def _l1_bytes(dev: Device, shared_per_sm: int) -> int:
    total = int(dev.memory.l1_kib_per_sm * 1024)
    choices = sorted(int(k * 1024) for k in dev.allocation.shared_carveouts_kib)
    carve = next((c for c in choices if c >= shared_per_sm), shared_per_sm)
    return max(total - carve, 16 * 1024)


def _streams(trace) -> tuple[list, dict[int, int]]:
    streams, local = [], {}
    for w, stream in sorted(trace.streams().items()):
        local[w] = len(streams)
        lengths = stream.end - stream.start
        streams.append((stream.pcs(), np.repeat(stream.order, lengths)))
    return streams, local


def _round(trace, table, nregs, machine: Machine, dev: Device, blocks_in_round: int,
           shared_per_block: int, active_sms: int, wpb: int) -> RoundResult:
    streams, local = _streams(trace)
    l2_share = int(dev.memory.l2_kib * 1024 / max(active_sms, 1))
    costs = request_costs(trace, l1_bytes=_l1_bytes(dev, shared_per_block * blocks_in_round),
                          l2_share_bytes=l2_share)
    costs = {(local[w], step, pc): c for (w, step, pc), c in costs.items() if w in local}
    return simulate_round(streams, table, nregs, costs, machine, active_sms=active_sms,
                          warps_per_block=wpb)


def _subset(trace, keep_blocks: int, wpb: int):
    """A view of the trace with only its first ``keep_blocks`` blocks (for the tail)."""
    blocks = sorted(int(b) for b in trace.blocks)[:keep_blocks]
    return _TraceSubset(trace, {b * wpb + i for b in blocks for i in range(wpb)}, blocks)


class _TraceSubset:
    def __init__(self, trace, warps: set[int], blocks: list[int]):
        self._t, self._warps, self.blocks = trace, warps, np.array(blocks)
        self.program = trace.program

    def streams(self):
        return {w: s for w, s in self._t.streams().items() if w in self._warps}

    @property
    def memory(self):
        acc = self._t.memory
        keep = np.isin(acc.warp, list(self._warps))
        return type(acc)(*(getattr(acc, f)[keep] for f in acc.__dataclass_fields__))


def predict_launch(kernel: CorpusKernel, config: LaunchConfig, device: str | Device, *,
                   language: str = "cuda", sm_count: int | None = None, seed: int = 0,
                   machine: Machine | None = None) -> StaticResult:
    """Predict the time of one corpus launch on ``device`` without running it."""
    from kerncast.emu import emulate  # noqa: PLC0415

    started = time.perf_counter()
    dev = get_device(device)
    machine = machine or machine_for(dev)
    tu, module = _compiled(str(kernel.source_path(language)), language, dev.key,
                           tuple(sorted(config.defines.items())))
    compiled = tu.kernel(kernel.entry)
    res = compiled.resources(dev.ptx_target)
    shared = res.shared_static + config.dynamic_shared
    occ = occupancy(dev, config.threads_per_block, res.registers, shared)
    if occ.blocks_per_sm == 0:
        raise InputError(f"{kernel.name} with {config.label()} cannot run on {dev.key}: one "
                         f"block needs more {occ.limiting} than an SM has")
    n_sm = sm_count or dev.compute.sm_count
    blocks = config.blocks
    psat = occ.blocks_per_sm
    per_sm = min(psat, math.ceil(blocks / n_sm))
    active = min(n_sm, blocks)
    chosen = [i * n_sm for i in range(per_sm) if i * n_sm < blocks]
    args = _inputs(kernel, config, seed)
    values = [args[a.name] for a in kernel.spec.args]
    result = emulate(module, config, values, chosen, entry=compiled.entry,
                     registers=res.registers)
    trace = result.trace
    table, nregs = build_table(trace.program, machine)
    wpb = trace.warps_per_block
    full = _round(trace, table, nregs, machine, dev, per_sm, shared, active, wpb)
    wave = psat * n_sm
    waves, rest = divmod(blocks, wave) if per_sm == psat else (0, blocks)
    cycles = waves * full.cycles
    if rest:
        tail_per_sm = math.ceil(rest / n_sm)
        tail = full if tail_per_sm >= per_sm else _round(
            _subset(trace, tail_per_sm, wpb), table, nregs, machine, dev, tail_per_sm, shared,
            min(n_sm, rest), wpb)
        cycles += tail.cycles
    launch = machine.launch_seconds(blocks)
    seconds = cycles / machine.clock_hz + launch
    return _result(seconds, cycles, full, machine, launch, {
        "device": dev.key, "calibration": machine.calibration.device,
        "adapted_from": machine.adapted_from, "registers": res.registers,
        "shared_bytes": shared, "blocks_per_sm": psat, "limiting": occ.limiting,
        "sm_count": n_sm, "blocks": blocks, "waves": waves + (1 if rest else 0),
        "round_blocks": per_sm, "round_cycles": full.cycles,
        "round_instructions": full.instructions, "extrapolated": full.scale,
        "emulated_blocks": len(chosen), "seconds_to_predict": time.perf_counter() - started,
    })


def _result(seconds: float, cycles: float, full: RoundResult, machine: Machine, launch: float,
            based_on: dict) -> StaticResult:
    clock = machine.clock_hz
    waves = cycles / max(full.cycles, 1e-9)
    compute = max(v for k, v in full.busy.items() if k != "lsu") * waves / clock
    memory = max(full.dram_bytes / machine.dram_bytes_per_cycle() * based_on["round_blocks"]
                 and full.busy.get("lsu", 0.0), 0.0) * waves / clock
    dram = full.dram_bytes * based_on["sm_count"] / machine.dram_bytes_per_cycle() * waves / clock
    sync = full.barrier_wait / max(full.instructions, 1) * waves / clock
    parts = {"compute": compute, "memory": max(memory, dram), "synchronisation": sync,
             "launch": launch}
    parts["latency"] = max(seconds - launch - max(parts["compute"], parts["memory"]), 0.0)
    bottleneck = max(("compute", "memory", "latency", "synchronisation", "launch"),
                     key=lambda k: parts[k])
    return StaticResult(seconds, parts, bottleneck, based_on)
