"""Launch geometry, kernel arguments and the choice of blocks to emulate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from kerncast._errors import InputError
from kerncast.emu._layout import param_offsets
from kerncast.emu._memory import GlobalMemory, Region
from kerncast.emu._types import dtype_of
from kerncast.core import BufferOffset, Chunked, Launch, dims
from kerncast.ptx import Function, Param

__all__ = ["Launch", "as_launch", "bind_arguments", "select_blocks"]

def as_launch(launch) -> Launch:
    """Accept a :class:`~kerncast.core.Launch`, anything with ``grid`` and ``block`` (and
    ``dynamic_shared``), a mapping with ``grid``, ``block`` (and ``dynamic_shared`` or
    ``shared``), or a tuple ``(grid, block[, smem])``.

    Raises
    ------
    InputError
        For malformed dimensions, a block over 1024 threads or a grid over the limits.
    """
    if isinstance(launch, Launch):
        return launch
    if hasattr(launch, "grid") and hasattr(launch, "block"):
        return Launch(dims(launch.grid, "grid"), dims(launch.block, "block"),
                      int(getattr(launch, "dynamic_shared", 0) or 0))
    if isinstance(launch, Mapping):
        if "grid" not in launch or "block" not in launch:
            raise InputError("a launch mapping needs 'grid' and 'block' entries")
        smem = launch.get("dynamic_shared", launch.get("shared", 0))
        return Launch(launch["grid"], launch["block"], int(smem))
    if isinstance(launch, (tuple, list)) and len(launch) in (2, 3):
        smem = int(launch[2]) if len(launch) == 3 else 0
        return Launch(launch[0], launch[1], smem)
    raise InputError(f"cannot read a launch from {launch!r}; give (grid, block) or a "
                     "Launch")


def _scalar_bytes(param: Param, value, name: str) -> bytes:
    ptype = param.type
    if param.dims or ptype == "b8" and param.size != 1:
        raw = bytes(value) if isinstance(value, (bytes, bytearray)) else \
            np.asarray(value).tobytes()
        if len(raw) != param.size:
            raise InputError(f"argument {name} must be {param.size} bytes (an aggregate "
                             f".param), got {len(raw)}")
        return raw
    dt = dtype_of(ptype)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if dt.kind == "f":
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise InputError(f"argument {name} (.{ptype}) needs a number, got "
                             f"{type(value).__name__}")
        return dt.type(value).tobytes()
    if isinstance(value, (float, np.floating)):
        raise InputError(f"argument {name} is an integer parameter (.{ptype}) but got the "
                         f"float {value!r}; pass an integer")
    if not isinstance(value, (int, np.integer)):
        raise InputError(f"argument {name} (.{ptype}) needs an integer, got "
                         f"{type(value).__name__}")
    value = int(value)
    bits = dt.itemsize * 8
    low = -(1 << (bits - 1))  # compilers declare C ints as .u32: allow two's complement
    high = (1 << bits) - 1 if ptype[0] != "s" else (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise InputError(f"argument {name} = {value} does not fit the .{ptype} parameter "
                         f"({low} to {high})")
    return (value & ((1 << bits) - 1)).to_bytes(dt.itemsize, "little")


def _ordered(kernel: Function, args) -> list[tuple[Param, str, object]]:
    params = kernel.params
    names = ", ".join(p.name for p in params) or "none"
    if isinstance(args, Mapping):
        unknown = [k for k in args if k not in {p.name for p in params}]
        if unknown:
            raise InputError(f"kernel {kernel.name} has no parameter {unknown[0]!r}; its "
                             f"parameters are {names}")
        missing = [p.name for p in params if p.name not in args]
        if missing:
            raise InputError(f"kernel {kernel.name} needs a value for {missing[0]} "
                             f"(parameters: {names})")
        return [(p, p.name, args[p.name]) for p in params]
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise InputError("pass the kernel's arguments as a list (in parameter order) or a "
                         "dict by parameter name")
    if len(args) != len(params):
        raise InputError(f"kernel {kernel.name} takes {len(params)} arguments ({names}), "
                         f"got {len(args)}")
    return [(p, p.name, v) for p, v in zip(params, args)]


def pointer_params(kernel: Function) -> set[str]:
    """The parameters the kernel uses as global pointers: loaded from param space and
    converted with ``cvta.to.global`` (as NVRTC, nvcc and clang emit every pointer
    parameter of a kernel), or loaded and used as an address directly."""
    loaded: dict[str, str] = {}
    found: set[str] = set()
    for ins in getattr(kernel, "body", ()):
        ops = getattr(ins, "operands", ())
        op = getattr(ins, "opcode", None)
        if op == "ld" and getattr(ins, "space", None) == "param" and len(ops) == 2:
            base = getattr(ops[1], "base", None)
            if getattr(ops[0], "name", None) and getattr(base, "name", None):
                loaded[ops[0].name] = base.name
        elif op == "cvta" and len(ops) == 2 and getattr(ops[1], "name", None) in loaded:
            found.add(loaded[ops[1].name])
    return found


def bind_arguments(kernel: Function, args, gmem: GlobalMemory,
                   labels: Sequence[str] | None = None) -> tuple[bytes, dict[str, Region]]:
    """Parameter bytes of the launch, with every array placed in global memory.

    Arrays become buffers (the same array passed twice is one buffer); other values
    are converted to the parameter's type.

    Raises
    ------
    InputError
        For a wrong number of arguments, an array for a parameter that cannot hold
        a pointer, or a value that does not fit its parameter.
    """
    ordered = _ordered(kernel, args)
    pointers = pointer_params(kernel)
    offsets, size = param_offsets(kernel.params)
    data = bytearray(size)
    buffers: dict[str, Region] = {}
    placed: dict[tuple, Region] = {}
    for k, (param, name, value) in enumerate(ordered):
        label = labels[k] if labels is not None else name
        offset = 0
        if isinstance(value, BufferOffset):
            value, offset = value.array, value.byte_offset
            if not isinstance(value, (np.ndarray, Chunked)) or value.ndim == 0:
                raise InputError(f"argument {label} is a view of something that is not an array")
        if isinstance(value, Chunked) or isinstance(value, np.ndarray) and value.ndim > 0 or \
                isinstance(value, np.ndarray) and value.dtype.kind == "V":
            if param.size != 8 or param.dims:
                raise InputError(f"argument {label} is an array but parameter {param.name} "
                                 f"is a {param.size * 8}-bit .{param.type} scalar; pass a "
                                 "number")
            key = (id(value), value.nbytes) if isinstance(value, Chunked) else \
                (value.__array_interface__["data"][0], value.nbytes)
            region = placed.get(key)
            if region is None:
                region = placed[key] = gmem.add(label, value)
            buffers.setdefault(label, region)
            raw = (region.base + offset).to_bytes(8, "little")
        else:
            if param.name in pointers and not isinstance(value, (bytes, bytearray)):
                number = value.item() if isinstance(value, np.generic) else value
                raise InputError(f"argument {label} is the number {number!r} but the kernel "
                                 f"uses parameter {k} as a pointer; pass an array (or "
                                 "kerncast.Array / View)")
            raw = _scalar_bytes(param, value, label)
        data[offsets[param.name]:offsets[param.name] + len(raw)] = raw
    return bytes(data), buffers


def select_blocks(blocks, launch: Launch, *, device=None, registers: int | None = None,
                  shared: int = 0) -> np.ndarray:
    """Linear indices of the blocks to emulate.

    ``blocks`` is ``"all"``, ``"first-round"`` (the blocks the first SM holds in the
    first round, with ``kerncast.devices.occupancy`` for ``device``, ``registers``
    per thread and ``shared`` bytes per block; blocks are dealt to SMs round-robin,
    so SM 0 gets blocks 0, S, 2S, ... for S SMs), a sequence of indices,
    ``{"first": n}``, ``{"strided": n}`` (n blocks evenly spread) or
    ``{"random": n, "seed": s}``.
    """
    total = launch.blocks
    if isinstance(blocks, str):
        if blocks == "all":
            return np.arange(total, dtype=np.int64)
        if blocks == "first-round":
            return _first_round(launch, device, registers, shared)
        raise InputError(f"unknown block selection {blocks!r}; use 'all', 'first-round', a "
                         "list of block indices, {'first': n}, {'strided': n} or "
                         "{'random': n, 'seed': s}")
    if isinstance(blocks, Mapping):
        return _sample(blocks, total)
    try:
        chosen = np.asarray(list(blocks), dtype=np.int64)
    except (TypeError, ValueError):
        raise InputError(f"cannot read block indices from {blocks!r}") from None
    if chosen.size == 0:
        raise InputError("the block selection is empty; choose at least one block")
    if chosen.min() < 0 or chosen.max() >= total:
        raise InputError(f"block index {int(chosen.max() if chosen.max() >= total else chosen.min())} "
                         f"is outside the grid of {total} blocks")
    return np.unique(chosen)


def _sample(spec: Mapping, total: int) -> np.ndarray:
    kinds = [k for k in ("first", "strided", "random") if k in spec]
    if len(kinds) != 1:
        raise InputError("a block sample names exactly one of 'first', 'strided' or "
                         "'random' with a count")
    kind = kinds[0]
    n = int(spec[kind])
    if n < 1:
        raise InputError(f"the block sample needs at least one block, got {n}")
    n = min(n, total)
    if kind == "first":
        return np.arange(n, dtype=np.int64)
    if kind == "strided":
        return np.unique(np.round(np.linspace(0, total - 1, n)).astype(np.int64))
    rng = np.random.default_rng(spec.get("seed", 0))
    return np.sort(rng.choice(total, size=n, replace=False)).astype(np.int64)


def _first_round(launch: Launch, device, registers: int | None, shared: int) -> np.ndarray:
    from kerncast.devices import get_device, occupancy

    dev = get_device(device or "h100")
    regs = 32 if registers is None else int(registers)
    occ = occupancy(dev, launch.threads_per_block, regs, shared)
    per_sm = max(occ.blocks_per_sm, 1) if occ.blocks_per_sm else 0
    if per_sm == 0:
        raise InputError(f"no block of this launch fits on {dev.name} ({occ.limiting} "
                         "limit); the kernel cannot launch there")
    sms = dev.compute.sm_count
    chosen = [i * sms for i in range(per_sm) if i * sms < launch.blocks]
    return np.asarray(chosen or [0], dtype=np.int64)
