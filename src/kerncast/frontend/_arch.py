"""GPU target names: ``sm_90``, ``sm_90a``, ``compute_90``, ``90`` or a device name."""

from __future__ import annotations

import re

from kerncast._errors import InputError

__all__ = ["DEFAULT_ARCH", "arch_number", "compute_name", "resolve_arch"]

DEFAULT_ARCH = "sm_90"  # the H100
_ARCH = re.compile(r"^(?:sm_|compute_)?(\d{2,3})([af]?)$", re.IGNORECASE)


def _from_device(name: str) -> str:
    from kerncast.devices import get_device  # noqa: PLC0415 (keeps this module light)

    dev = get_device(name)
    if not dev.ptx_target:
        raise InputError(
            f"device {dev.key} has no PTX target (vendor {dev.vendor}); kerncast compiles "
            f"PTX for NVIDIA GPUs only, so choose an NVIDIA device or an arch such as sm_90"
        )
    return dev.ptx_target


def resolve_arch(arch: str | None) -> str:
    """The ``sm_XY[a|f]`` name for an arch or device name (``None`` gives sm_90).

    Raises
    ------
    InputError
        For a name that is neither an arch nor a known device.
    """
    if arch is None:
        return DEFAULT_ARCH
    match = _ARCH.match(str(arch).strip())
    if match:
        return f"sm_{match.group(1)}{match.group(2).lower()}"
    return _from_device(str(arch))


def arch_number(arch: str) -> int:
    """The numeric part: ``sm_90a`` gives 90."""
    match = _ARCH.match(arch)
    if not match:
        raise InputError(f"{arch!r} is not a GPU arch; write it as sm_90 (or a device name)")
    return int(match.group(1))


def compute_name(arch: str) -> str:
    """The virtual architecture of a real one: ``sm_90a`` gives ``compute_90a``."""
    return "compute_" + arch.split("_", 1)[1]
