"""The device specification: one validated TOML file per GPU.

A spec holds what the vendor documents about a GPU (SM count, limits per SM and per
block, allocation granularities, caches, clocks, memory, throughput per clock). Each
section names the reference its values come from; a field may name its own reference
in the section's ``sources`` table. Files are validated when loaded: an unknown or
missing field, a wrong type, an impossible value or a dangling reference is an
:class:`~kerncast.InputError` that names the file and the field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kerncast._errors import InputError

__all__ = ["Device", "load_spec"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="key into the spec's [references] table")
    sources: dict[str, str] = Field(
        default_factory=dict, description="per-field reference keys overriding `source`"
    )
    notes: str = ""


class Compute(_Section):
    sm_count: int = Field(gt=0, description="streaming multiprocessors (compute units)")
    warp_size: int = Field(gt=0, description="threads per warp (wavefront)")
    schedulers_per_sm: int = Field(gt=0, description="warp schedulers (SIMDs) per SM")
    base_clock_mhz: float = Field(gt=0)
    boost_clock_mhz: float = Field(gt=0)


class Limits(_Section):
    threads_per_block: int = Field(gt=0)
    block_dims: tuple[int, int, int]
    grid_dims: tuple[int, int, int]
    threads_per_sm: int = Field(gt=0)
    warps_per_sm: int = Field(gt=0)
    blocks_per_sm: int = Field(gt=0)
    registers_per_sm: int = Field(gt=0, description="32-bit registers per SM")
    registers_per_block: int = Field(gt=0)
    registers_per_thread: int = Field(gt=0)
    shared_per_sm: int = Field(ge=0, description="bytes of shared memory per SM, largest carve-out")
    shared_per_block: int = Field(ge=0, description="bytes per block without opt-in")
    shared_per_block_optin: int = Field(ge=0, description="bytes per block with opt-in")
    reserved_shared_per_block: int = Field(ge=0, description="bytes the system reserves per block")


class Allocation(_Section):
    register_unit: int = Field(gt=0, description="registers are allocated in units of this many")
    register_granularity: Literal["warp", "block"]
    register_subpartitions: int = Field(
        gt=0, description="register file partitions (warps are placed per partition)"
    )
    warp_unit: int = Field(default=1, gt=0, description="warps are allocated in units of this many")
    shared_unit: int = Field(gt=0, description="shared memory allocation unit in bytes")
    shared_carveouts_kib: tuple[float, ...] = Field(
        default=(), description="selectable shared-memory sizes per SM (KiB); empty if fixed"
    )


class Memory(_Section):
    kind: str = Field(description="GDDR5, HBM3, ...")
    size_gib: float = Field(gt=0)
    bus_width_bits: int = Field(gt=0)
    clock_mhz: float = Field(gt=0, description="memory clock as the vendor quotes it")
    peak_bandwidth_gbs: float = Field(gt=0, description="GB/s (10^9 bytes per second)")
    l1_kib_per_sm: float = Field(ge=0, description="L1 (with shared memory where unified)")
    l1_line_bytes: int = Field(gt=0)
    l2_kib: float = Field(ge=0)
    l2_line_bytes: int = Field(gt=0)
    sector_bytes: int = Field(gt=0, description="smallest unit of a memory transaction")


class Throughput(_Section):
    """Results per clock per SM (the CUDA guide's arithmetic throughput table)."""

    fp32: float = Field(gt=0)
    fp64: float = Field(gt=0)
    int32: float = Field(gt=0)
    sfu: float = Field(gt=0, description="special functions: rsqrt, log2, exp2, sin, cos")
    conversion: float = Field(gt=0)
    load_store: float = Field(gt=0, description="load/store unit lanes per clock")


class Device(BaseModel):
    """A GPU as its spec file describes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    name: str
    key: str = Field(default="", description="file stem; filled in by the loader")
    vendor: Literal["nvidia", "amd"]
    aliases: tuple[str, ...] = ()
    architecture: str
    compute_capability: str = Field(description="NVIDIA CC such as '9.0', or an AMD gfx ISA")
    ptx_target: str | None = Field(default=None, description="e.g. 'sm_90'; NVIDIA only")
    year: int = Field(ge=2000, le=2100)
    tdp_watts: float = Field(gt=0)
    references: dict[str, str]
    compute: Compute
    limits: Limits
    allocation: Allocation
    memory: Memory
    throughput: Throughput

    @model_validator(mode="after")
    def _check(self) -> Device:
        self._check_references()
        self._check_consistency()
        return self

    def _sections(self) -> dict[str, _Section]:
        names = ("compute", "limits", "allocation", "memory", "throughput")
        return {name: getattr(self, name) for name in names}

    def _check_references(self) -> None:
        for section_name, section in self._sections().items():
            keys = {"source": section.source, **section.sources}
            for field, ref in keys.items():
                if ref not in self.references:
                    known = ", ".join(sorted(self.references)) or "none"
                    raise ValueError(
                        f"{section_name}.{field} cites reference {ref!r}, which is not in "
                        f"[references] (known: {known})"
                    )
                if field != "source" and field not in type(section).model_fields:
                    raise ValueError(f"{section_name}.sources names unknown field {field!r}")

    def _check_consistency(self) -> None:
        lim, comp = self.limits, self.compute
        if lim.warps_per_sm * comp.warp_size < lim.threads_per_sm:
            raise ValueError("limits.warps_per_sm * compute.warp_size is below limits.threads_per_sm")
        if lim.threads_per_block > lim.threads_per_sm:
            raise ValueError("limits.threads_per_block exceeds limits.threads_per_sm")
        if lim.shared_per_block > lim.shared_per_block_optin:
            raise ValueError("limits.shared_per_block exceeds limits.shared_per_block_optin")
        if lim.shared_per_block_optin + lim.reserved_shared_per_block > lim.shared_per_sm:
            raise ValueError("limits.shared_per_block_optin plus the reserved bytes exceed shared_per_sm")
        if comp.boost_clock_mhz < comp.base_clock_mhz:
            raise ValueError("compute.boost_clock_mhz is below compute.base_clock_mhz")
        if self.vendor == "nvidia" and not self.ptx_target:
            raise ValueError("an NVIDIA device needs ptx_target (e.g. 'sm_90')")

    # Derived quantities -------------------------------------------------------------

    @property
    def peak_fp32_gflops(self) -> float:
        """Peak fp32 rate in GFLOP/s, counting an FMA as two operations, at boost clock."""
        return 2 * self.throughput.fp32 * self.compute.sm_count * self.compute.boost_clock_mhz / 1e3

    @property
    def peak_fp64_gflops(self) -> float:
        """Peak fp64 rate in GFLOP/s, counting an FMA as two operations, at boost clock."""
        return 2 * self.throughput.fp64 * self.compute.sm_count * self.compute.boost_clock_mhz / 1e3

    @property
    def arch_number(self) -> int | None:
        """Compute capability as an integer (``90`` for 9.0); ``None`` for AMD devices."""
        if self.vendor != "nvidia":
            return None
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)

    def source_of(self, section: str, field: str) -> str:
        """The full citation of one value, e.g. ``source_of('limits', 'warps_per_sm')``."""
        sec = self._sections()[section]
        return self.references[sec.sources.get(field, sec.source)]


def _format_error(path: Path, err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return (
        f"device spec {path}: field '{where}': {first['msg']}; "
        f"fix the file (see devices/specs/README.md for the fields)"
    )


def load_spec(path: str | Path) -> Device:
    """Read and validate one device spec file.

    Parameters
    ----------
    path
        A ``.toml`` file in the format of ``devices/specs``.

    Raises
    ------
    InputError
        If the file cannot be read, is not TOML, or fails validation; the message
        names the file and the offending field.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"cannot read device spec {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"device spec {path} is not valid TOML: {exc}; fix the file") from None
    raw.setdefault("key", path.stem)
    try:
        return Device.model_validate(raw)
    except ValidationError as exc:
        raise InputError(_format_error(path, exc)) from None
