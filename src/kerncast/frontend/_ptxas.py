"""Resource usage per kernel from ptxas: registers, shared, local and constant memory.

ptxas assembles the whole module (``ptxas -arch=sm_90 -v --warn-on-spills``, whole-
program mode, as the driver does when it loads PTX) and its ``-v`` report gives, per
entry::

    ptxas info    : Compiling entry function 'k1' for 'sm_90'
    ptxas info    : Function properties for k1
        192 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 48 registers, used 1 barriers, 1024 bytes smem,
                    192 bytes cumulative stack size

Older releases also print ``N bytes cmem[B]`` there and ``N+M bytes lmem/smem``;
13.0 does not report constant memory at all, so it is read from the cubin's ELF
sections instead: ``.nv.constant<B>.<entry>`` per kernel (bank 0 holds the
parameters and the driver's fields), ``.nv.constant<B>`` per module
(``__constant__`` variables, literals).
"""

from __future__ import annotations

import re
import struct
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kerncast._errors import InputError, ToolchainError
from kerncast.frontend import _process
from kerncast.frontend._ptxscan import LaunchBounds
from kerncast.frontend._toolchain import Tool

__all__ = ["PtxasReport", "Resources", "parse_cubin_constants", "parse_verbose", "run_ptxas",
           "run_ptxas_log"]

_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"Function properties for ([^\s]+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_GMEM = re.compile(r"ptxas info\s*:\s*(\d+) bytes gmem")
_ITEM = re.compile(r"(\d+)(?:\+(\d+))? bytes (smem|lmem|cmem\[(\d+)\]|cumulative stack size)")
_BARRIERS = re.compile(r"used (\d+) barriers")


@dataclass(frozen=True)
class Resources:
    """What one kernel uses on one target, as ptxas assembled it.

    Attributes
    ----------
    kernel, arch
        The PTX entry name and the ``sm_XY`` target.
    registers
        Registers per thread.
    shared_static
        Static shared memory per block, bytes (without the driver's reservation).
    local
        Stack frame (local memory) per thread, bytes.
    spill_stores, spill_loads
        Bytes of register spills written / read per thread.
    cumulative_stack
        Stack including called functions, bytes (0 when ptxas does not report it).
    barriers
        Named barriers the kernel uses.
    cmem
        Constant memory per bank of this kernel, ``{bank: bytes}``.
    module_cmem
        Constant memory per bank shared by the module's kernels (``__constant__``).
    gmem
        Module-scope ``.global`` variables, bytes.
    launch_bounds
        The entry's ``.maxntid``/``.reqntid``/``.minnctapersm``/``.maxnreg``.
    toolchain
        The ptxas that made the report, e.g. ``"ptxas 13.0.88"``.
    """

    kernel: str
    arch: str
    registers: int
    shared_static: int
    local: int
    spill_stores: int
    spill_loads: int
    cumulative_stack: int
    barriers: int
    cmem: dict[int, int] = field(default_factory=dict)
    module_cmem: dict[int, int] = field(default_factory=dict)
    gmem: int = 0
    launch_bounds: LaunchBounds = field(default_factory=LaunchBounds)
    toolchain: str = ""

    def to_dict(self) -> dict:
        out = asdict(self)
        out["cmem"] = {str(k): v for k, v in self.cmem.items()}
        out["module_cmem"] = {str(k): v for k, v in self.module_cmem.items()}
        out["launch_bounds"] = self.launch_bounds.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Resources:
        data = dict(data)
        bounds = {k: (tuple(v) if isinstance(v, list) else v)
                  for k, v in data.pop("launch_bounds", {}).items() if k != "thread_limit"}
        data["cmem"] = {int(k): int(v) for k, v in data.get("cmem", {}).items()}
        data["module_cmem"] = {int(k): int(v) for k, v in data.get("module_cmem", {}).items()}
        return cls(**data, launch_bounds=LaunchBounds(**bounds))


@dataclass
class PtxasReport:
    """The parsed ``-v`` report of one module: numbers per function (entries and the
    functions they call) and module totals."""

    functions: dict[str, dict] = field(default_factory=dict)
    gmem: int = 0
    module_cmem: dict[int, int] = field(default_factory=dict)


def _blank() -> dict:
    return {"registers": 0, "shared_static": 0, "local": 0, "spill_stores": 0,
            "spill_loads": 0, "cumulative_stack": 0, "barriers": 0, "cmem": {}}


def _used_line(line: str, entry: dict) -> None:
    entry["registers"] = int(_USED.search(line).group(1))
    barriers = _BARRIERS.search(line)
    if barriers:
        entry["barriers"] = int(barriers.group(1))
    for size, extra, what, bank in _ITEM.findall(line):
        total = int(size) + int(extra or 0)
        if what == "smem":
            entry["shared_static"] = total
        elif what == "lmem":
            entry["local"] = max(entry["local"], total)
        elif what == "cumulative stack size":
            entry["cumulative_stack"] = total
        else:
            entry["cmem"][int(bank)] = total


def parse_verbose(text: str) -> PtxasReport:
    """Parse ptxas ``-v`` output (stdout and stderr together) into a :class:`PtxasReport`."""
    report = PtxasReport()
    current: str | None = None  # the entry being compiled
    props: str | None = None  # whose "Function properties" the next line gives
    for line in text.splitlines():
        if m := _COMPILING.search(line):
            current = m.group(1)
            report.functions.setdefault(current, _blank())
        elif m := _PROPS.search(line):
            props = m.group(1)
        elif (m := _FRAME.search(line)) and props is not None:
            frame, stores, loads = (int(g) for g in m.groups())
            report.functions.setdefault(props, _blank()).update(
                local=frame, spill_stores=stores, spill_loads=loads)
            props = None
        elif _USED.search(line) and current is not None:
            _used_line(line, report.functions[current])
        elif m := _GMEM.search(line):
            report.gmem = max(report.gmem, int(m.group(1)))
            for size, _extra, _what, bank in _ITEM.findall(line):
                if bank:
                    report.module_cmem[int(bank)] = int(size)
    return report


def parse_cubin_constants(data: bytes) -> tuple[dict[str, dict[int, int]], dict[int, int]]:
    """Constant-bank sizes from a cubin: ``({entry: {bank: bytes}}, {bank: bytes})``.

    Returns empty maps for anything that is not a 64-bit little-endian ELF.
    """
    per_kernel: dict[str, dict[int, int]] = {}
    module: dict[int, int] = {}
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return per_kernel, module
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        return per_kernel, module
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off, strtab_size = headers[shstrndx][4], headers[shstrndx][5]
    strtab = data[strtab_off:strtab_off + strtab_size]
    for name_off, _type, _flags, _addr, _off, size in headers:
        end = strtab.find(b"\0", name_off)
        name = strtab[name_off:end].decode(errors="replace")
        if m := re.fullmatch(r"\.nv\.constant(\d+)\.(.+)", name):
            per_kernel.setdefault(m.group(2), {})[int(m.group(1))] = size
        elif m := re.fullmatch(r"\.nv\.constant(\d+)", name):
            module[int(m.group(1))] = size
    return per_kernel, module


def _failure(log: str, arch: str, ptx_target: str | None, raw_ptx: bool, display: str,
             tool: Tool) -> Exception:
    lines = [ln.strip() for ln in log.splitlines() if "error" in ln or "fatal" in ln][:20]
    text = "\n".join(lines) or log.strip()[:2000]
    if "is not defined for option 'gpu-name'" in log:
        return InputError(f"ptxas does not know the target {arch}; choose one it supports, "
                          f"such as sm_75, sm_80, sm_86, sm_89, sm_90 or sm_100")
    if "SM version specified by .target is higher" in log:
        return InputError(f"{display} is PTX for {ptx_target}, which cannot be assembled for "
                          f"{arch}; ask for {ptx_target} or a newer target")
    if m := re.search(r"Unsupported \.version (\S+); current version is '([^']+)'", log):
        return ToolchainError(
            f"{tool} ({tool.path}) reads PTX ISA {m.group(2)} at most, but {display} is ISA "
            f"{m.group(1)}; put a newer ptxas on PATH, or take the old one off PATH so that "
            f"the nvidia-cuda-nvcc wheel's is used")
    if m := re.search(r"function '([^']+)' uses too much (shared|local) data "
                      r"\((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\)", log):
        name, space, size, limit = m.group(1), m.group(2), int(m.group(3), 16), int(m.group(4), 16)
        advice = ("shrink its __shared__ arrays, or make the rest dynamic shared memory "
                  "(extern __shared__, given with --smem)" if space == "shared"
                  else "shrink its local arrays")
        return InputError(f"kernel {name} declares {size:,} bytes of static {space} memory, "
                          f"more than {arch} allows ({limit:,}); {advice}")
    if raw_ptx:
        return InputError(f"ptxas rejected {display}; fix the PTX:\n{text}")
    return ToolchainError(f"ptxas failed on the PTX compiled from {display}:\n{text}")


def run_ptxas(tool: Tool, ptx: str, arch: str, *, ptx_target: str | None = None,
              raw_ptx: bool = False, display: str = "the module",
              options: tuple[str, ...] = ()) -> tuple[PtxasReport, dict, dict]:
    """Assemble ``ptx`` for ``arch`` (with the user's ptxas ``options``, such as
    ``--maxrregcount=32``); return the report and the cubin's constant banks."""
    code, log, cubin, src = _assembled(tool, ptx, arch, options)
    if code != 0:
        raise _failure(log.replace(src, display), arch, ptx_target, raw_ptx, display, tool)
    per_kernel, module = parse_cubin_constants(cubin)
    return parse_verbose(log), per_kernel, module


def run_ptxas_log(tool: Tool, ptx: str, arch: str,
                  options: tuple[str, ...] = ()) -> tuple[str, bytes] | None:
    """Assemble ``ptx`` for ``arch`` as :func:`run_ptxas` does; return ptxas's ``-v``
    report and the cubin, or None where ptxas fails (for a batch of modules, each of
    which is then assembled alone and reports its own error)."""
    code, log, cubin, _ = _assembled(tool, ptx, arch, options)
    return None if code != 0 else (log, cubin)


def _assembled(tool: Tool, ptx: str, arch: str,
               options: tuple[str, ...]) -> tuple[int, str, bytes, str]:
    """(ptxas's exit status, its output, the cubin, the path it was given the PTX at)."""
    with tempfile.TemporaryDirectory(prefix="kerncast-ptxas-") as tmp:
        src, out = Path(tmp) / "module.ptx", Path(tmp) / "module.cubin"
        src.write_text(ptx)
        proc = _process.run_tool([tool.path, f"-arch={arch}", "-v", "--warn-on-spills",
                                  *options, str(src), "-o", str(out)])
        log = (proc.stdout or "") + "\n" + (proc.stderr or "")
        cubin = out.read_bytes() if proc.returncode == 0 and out.exists() else b""
        return proc.returncode, log, cubin, str(src)
