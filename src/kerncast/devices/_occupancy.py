"""Resident blocks per SM, as CUDA's occupancy calculator computes them.

The rules follow ``cuda_occupancy.h`` (CUDA 13.0) and the occupancy equations of the
static-analysis seed (section IV-A): a block is resident if its warps, its registers
and its shared memory fit beside the others, and the SM's block limit allows it.

* warps: ``floor(warps_per_sm / ceil(threads / warp_size))``;
* registers (per-warp granularity): each warp holds ``ceil(regs * warp_size, unit)``
  registers; warps are placed in register-file partitions, so the SM holds
  ``floor(registers_per_sm / partitions / per_warp) * partitions`` warps; a block
  whose registers (with its warps rounded up to the partitions) exceed the
  per-block limit cannot launch at all;
* registers (per-block granularity, compute capability 1.x): the block holds
  ``ceil(regs * warp_size * ceil(warps, warp_unit), unit)`` registers;
* shared memory: the block holds ``ceil(shared + reserved, unit)`` bytes out of the
  carve-out in force (the largest one unless a preference is given).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kerncast._errors import InputError
from kerncast.devices._catalog import get_device
from kerncast.devices._spec import Device

__all__ = ["Occupancy", "occupancy"]

_UNLIMITED = 1 << 30


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM for one kernel and launch on one device."""

    device: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float
    limiting: str
    limits: dict[str, int]
    shared_per_sm_used: int

    def to_dict(self) -> dict:
        return asdict(self)


def _ceil_to(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _warp_limit(dev: Device, warps: int) -> int:
    per_block = _ceil_to(warps, dev.allocation.warp_unit)
    return dev.limits.warps_per_sm // per_block


def _register_limit(dev: Device, warps: int, regs: int) -> int:
    if regs == 0:
        return _UNLIMITED
    alloc, lim, ws = dev.allocation, dev.limits, dev.compute.warp_size
    if alloc.register_granularity == "block":
        per_block = _ceil_to(regs * ws * _ceil_to(warps, alloc.warp_unit), alloc.register_unit)
        return 0 if per_block > lim.registers_per_block else lim.registers_per_sm // per_block
    per_warp = _ceil_to(regs * ws, alloc.register_unit)
    parts = alloc.register_subpartitions
    assumed_per_block = per_warp * _ceil_to(warps, parts)  # the hardware's per-block check
    if assumed_per_block > lim.registers_per_block or per_warp * warps > lim.registers_per_block:
        return 0
    warps_per_part = (lim.registers_per_sm // parts) // per_warp
    return (warps_per_part * parts) // warps


def _shared_per_sm(dev: Device, needed: int, carveout_percent: float | None) -> int:
    largest = dev.limits.shared_per_sm
    if carveout_percent is None:
        return largest
    wanted = math.ceil(largest * carveout_percent / 100)
    choices = sorted(int(k * 1024) for k in dev.allocation.shared_carveouts_kib) or [largest]
    preferred = next((c for c in choices if c >= wanted), largest)
    if preferred >= needed:
        return preferred
    # The driver raises the carve-out to the smallest one that fits a block.
    return next((c for c in choices if c >= needed), largest)


def _shared_limit(dev: Device, shared: int, carveout_percent: float | None) -> tuple[int, int]:
    per_block = _ceil_to(shared + dev.limits.reserved_shared_per_block, dev.allocation.shared_unit)
    if per_block > dev.limits.shared_per_sm:
        return 0, dev.limits.shared_per_sm
    per_sm = _shared_per_sm(dev, per_block, carveout_percent)
    if shared == 0 and dev.limits.reserved_shared_per_block == 0:
        return _UNLIMITED, per_sm
    return per_sm // per_block, per_sm


def _validate(dev: Device, threads: int, regs: int, shared: int) -> None:
    lim = dev.limits
    if threads <= 0:
        raise InputError(f"block size {threads} is not positive; choose a block of 1 to "
                         f"{lim.threads_per_block} threads")
    if threads > lim.threads_per_block:
        raise InputError(
            f"block size {threads} exceeds the {dev.key} limit of {lim.threads_per_block} "
            f"threads per block; choose a block of at most {lim.threads_per_block} threads"
        )
    if regs < 0 or regs > lim.registers_per_thread:
        raise InputError(
            f"{regs} registers per thread is outside 0..{lim.registers_per_thread} on "
            f"{dev.key}; give the count that ptxas reports (kerncast inspect shows it)"
        )
    if shared < 0:
        raise InputError(f"{shared} bytes of shared memory per block is negative; give 0 or "
                         "more (--smem)")
    if shared > lim.shared_per_block_optin:
        raise InputError(
            f"{shared} bytes of shared memory per block is outside 0.."
            f"{lim.shared_per_block_optin} on {dev.key} (the opt-in maximum per block); "
            f"use less shared memory per block"
        )


def occupancy(
    device: str | Device,
    threads_per_block: int,
    registers_per_thread: int,
    shared_bytes_per_block: int = 0,
    *,
    carveout_percent: float | None = None,
) -> Occupancy:
    """Resident blocks and warps per SM and the resource that limits them.

    Parameters
    ----------
    device
        A device name, alias, spec path or :class:`Device`.
    threads_per_block
        Threads in one block (all dimensions multiplied).
    registers_per_thread
        Registers per thread as ptxas reports them.
    shared_bytes_per_block
        Static plus dynamic shared memory of one block, in bytes.
    carveout_percent
        The kernel's preferred shared-memory carve-out (percent of the largest), as
        ``cudaFuncAttributePreferredSharedMemoryCarveout``; ``None`` for the default.

    Returns
    -------
    Occupancy
        ``blocks_per_sm`` is 0 when one block cannot fit (e.g. too many registers).
    """
    dev = get_device(device)
    _validate(dev, threads_per_block, registers_per_thread, shared_bytes_per_block)
    warps = -(-threads_per_block // dev.compute.warp_size)
    shared_blocks, shared_per_sm = _shared_limit(dev, shared_bytes_per_block, carveout_percent)
    limits = {
        "warps": _warp_limit(dev, warps),
        "blocks": dev.limits.blocks_per_sm,
        "registers": _register_limit(dev, warps, registers_per_thread),
        "shared_memory": shared_blocks,
    }
    blocks = min(limits.values())
    limiting = next(name for name, value in limits.items() if value == blocks)
    return Occupancy(
        device=dev.key,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        shared_bytes_per_block=shared_bytes_per_block,
        blocks_per_sm=blocks,
        warps_per_sm=blocks * warps,
        occupancy=blocks * warps / dev.limits.warps_per_sm,
        limiting=limiting,
        limits={k: (v if v < _UNLIMITED else -1) for k, v in limits.items()},
        shared_per_sm_used=shared_per_sm,
    )
