"""The real SASS of a PTX module: assembled by ptxas, disassembled by nvdisasm.

``ptxas -arch=sm_90 -lineinfo`` assembles the module as the driver does when it
loads PTX (whole-program, ``-O3``) and, with ``-lineinfo``, records for every SASS
instruction the PTX line it came from (the ``.nv_debug_line_sass`` section);
``nvdisasm -gp`` prints the code with those lines. :func:`parse_disassembly` cuts
each function into basic blocks (a block starts at a label or after a branch, an
exit or a return) with their successors, every instruction carrying its PTX line.

ptxas comes from ``PATH`` or the ``nvidia-cuda-nvcc`` wheel, nvdisasm from ``PATH``
or the ``nvidia-cuda-nvdisasm`` wheel (:func:`find_nvdisasm`). The parsed code is
cached on disk by the SHA-256 of the PTX text, the architecture and both tool
versions (``$KERNCAST_CACHE/v1/sass``), so a module is assembled once; within a
process the parsed code of the recent modules is kept too, and a caller asking for a
module that another thread is assembling waits for that result instead of running the
tools again.

nvdisasm takes about 0.2 s to start whatever it disassembles, more than ptxas and
NVRTC together on a small kernel. :func:`assemble_many` therefore fills the disk cache
for many modules at once (a sweep's configurations, each its own binary): their module-
scope names made distinct, the modules are assembled as one by one ptxas run and
disassembled by one nvdisasm run, and the code of each is cut out, its names and PTX
lines given back, and kept under its own key, as :func:`assemble` would have kept it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from kerncast._errors import ToolchainError
from kerncast.frontend import (BATCH, batch_index, declared_names, module_header, shares_a_run,
                               tagged, untagged)

__all__ = ["SassBlock", "SassCode", "SassFunction", "SassInstruction", "assemble",
           "assemble_many", "find_nvdisasm", "find_tools", "missing_tools", "parse_disassembly",
           "tools_signature", "NO_NVDISASM"]

NO_NVDISASM = ("nvdisasm not found: install the wheel with pip install nvidia-cuda-nvdisasm, "
               "or put nvdisasm on PATH")
LAYOUT = 1
"""Version of the cached disassembly; bump it when what is kept changes."""

_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
#: a section's start: ``.section`` and a blank (``.sectioninfo``, which nvdisasm prints
#: for sm_80/sm_86 inside a code section, is not one)
_ANY_SECTION = re.compile(r"^\s*\.section\s")
#: the version of what :func:`_code_text` keeps (2: ``.sectioninfo`` no longer ends the
#: code, which left the SASS of sm_80/sm_86 empty), part of the disk cache's key
CODE_TEXT = 2
_FUNCTION = re.compile(r"^\s*\.type\s+([^,\s]+),\s*@function")
_LABEL = re.compile(r"^([.$\w]+):\s*$")
_LINE = re.compile(r'^\s*//## File "[^"]*", line (\d+)')
_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")
_GUARD = re.compile(r"^@(!?U?P[T0-9]+)\s+")
_TARGET = re.compile(r"`\(([^)]+)\)")
_TABLE = re.compile(r'BRANCH_TARGETS\s+([^"*]+)')
_BRANCHES = frozenset(("BRA", "BRX", "JMP", "JMX"))
_ENDS = frozenset(("EXIT", "RET", "KILL"))


@dataclass(frozen=True)
class SassInstruction:
    """One SASS instruction: ``opcode`` with its modifiers (``ISETP.GE.AND``),
    ``guard`` (``"P0"``, ``"!P0"``, ``""`` when unguarded), ``line`` the PTX line it
    was assembled from (0 when the line table says nothing), ``targets`` the labels
    (or function) a branch, call or ``BSSY`` names (an indirect ``BRX`` lists its
    jump table's). ``inherited`` is True when no
    line-table row starts in its basic block before it: the line is the one of the
    code before a label or branch (a ``BSYNC`` at a join point, say), not its own."""

    offset: int
    opcode: str
    guard: str
    text: str
    line: int
    targets: tuple[str, ...] = ()
    inherited: bool = False

    @property
    def target(self) -> str | None:
        return self.targets[0] if self.targets else None

    @property
    def base(self) -> str:
        """The mnemonic without modifiers (``ISETP``)."""
        return self.opcode.split(".", 1)[0]

    @property
    def conditional(self) -> bool:
        return self.guard not in ("", "PT")


@dataclass(frozen=True)
class SassBlock:
    """A basic block: ``instructions`` run in order; ``successors`` are block indices
    within the function (fall-through first); ``labels`` name its start."""

    index: int
    labels: tuple[str, ...]
    instructions: tuple[SassInstruction, ...]
    successors: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.instructions)

    @property
    def last(self) -> SassInstruction:
        return self.instructions[-1]


@dataclass(frozen=True)
class SassFunction:
    """One function of the cubin (a kernel or a device function ptxas kept)."""

    name: str
    blocks: tuple[SassBlock, ...]

    @property
    def instructions(self) -> int:
        return sum(len(b) for b in self.blocks)

    def reachable(self) -> set[int]:
        """Blocks reachable from the entry block (the rest is padding after the exit)."""
        seen, todo = {0}, [0]
        while todo:
            for s in self.blocks[todo.pop()].successors:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return seen


@dataclass(frozen=True)
class SassCode:
    """Every function of one assembled module, by name."""

    arch: str
    functions: dict[str, SassFunction]
    tools: str = ""

    def function(self, name: str) -> SassFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no SASS function {name!r} (have {', '.join(self.functions)})") \
                from None


# -- parsing ------------------------------------------------------------------------


def _instruction(offset: int, body: str, line: int, inherited: bool) -> SassInstruction:
    guard = ""
    match = _GUARD.match(body)
    if match:
        guard = match.group(1)
        body = body[match.end():]
    opcode = body.split(None, 1)[0] if body.strip() else "NOP"
    table = _TABLE.search(body)
    if table:
        targets = tuple(t.strip() for t in table.group(1).split(",") if t.strip())
        body = body[:body.index("(*")].rstrip() if "(*" in body else body
    else:
        target = _TARGET.search(body)
        targets = (target.group(1),) if target else ()
    return SassInstruction(offset, opcode, guard, body, line, targets, inherited)


def _blocks(rows: list[tuple[tuple[str, ...], SassInstruction]]) -> tuple[SassBlock, ...]:
    """Cut a function's instructions (each with the labels just before it) into blocks."""
    starts = [0]
    for k, (labels, ins) in enumerate(rows):
        if labels and k:
            starts.append(k)
        if ins.base in _BRANCHES or ins.base in _ENDS:
            starts.append(k + 1)
    starts = sorted(set(s for s in starts if s < len(rows)))
    bounds = list(zip(starts, starts[1:] + [len(rows)]))
    where = {}
    for index, (lo, _) in enumerate(bounds):
        for label in rows[lo][0]:
            where[label] = index
    blocks = []
    for index, (lo, hi) in enumerate(bounds):
        instrs = tuple(ins for _, ins in rows[lo:hi])
        last = instrs[-1]
        succ: list[int] = []
        falls = index + 1 < len(bounds)
        if last.base in _BRANCHES:
            if last.conditional and falls:
                succ.append(index + 1)
            succ += [where[t] for t in last.targets if t in where]
        elif last.base in _ENDS:
            if last.conditional and falls:
                succ.append(index + 1)
        elif falls:
            succ.append(index + 1)
        labels = rows[lo][0]
        blocks.append(SassBlock(index, labels, instrs, tuple(dict.fromkeys(succ))))
    return tuple(blocks)


def parse_disassembly(text: str, arch: str = "sm_90", tools: str = "") -> SassCode:
    """Parse ``nvdisasm -gp`` output into functions of basic blocks."""
    functions: dict[str, list] = {}
    rows: list | None = None
    labels: list[str] = []
    declared: set[str] = set()
    line, fresh = 0, False
    for raw in text.splitlines():
        section = _SECTION.match(raw)
        if section:
            rows = functions.setdefault(section.group(1), [])
            labels, line, fresh = [], 0, False
            continue
        if rows is None:
            continue
        if _ANY_SECTION.match(raw):
            rows = None
            continue
        match = _FUNCTION.match(raw)
        if match:
            declared.add(match.group(1))
            continue
        match = _LINE.match(raw)
        if match:
            line, fresh = int(match.group(1)), True
            continue
        match = _LABEL.match(raw.strip())
        if match:
            name = match.group(1)
            if name in declared and rows and name not in functions:
                # a subroutine ptxas kept (CALL.REL): a function of its own
                rows = functions.setdefault(name, [])
                labels = []
            labels.append(name)
            fresh = False
            continue
        match = _INSTR.match(raw)
        if match:
            ins = _instruction(int(match.group(1), 16), match.group(2), line, not fresh)
            rows.append((tuple(labels), ins))
            labels = []
            if ins.base in _BRANCHES or ins.base in _ENDS:
                fresh = False
    return SassCode(arch, {name: SassFunction(name, _blocks(r)) for name, r in functions.items()
                           if r}, tools)


# -- assembling ---------------------------------------------------------------------


def find_nvdisasm() -> str | None:
    """nvdisasm on ``PATH``, else the ``nvidia-cuda-nvdisasm`` wheel's."""
    path = shutil.which("nvdisasm")
    if path:
        return path
    from kerncast.frontend import wheel_root

    root = wheel_root()
    cand = root / "bin" / "nvdisasm" if root else None
    if cand is not None and cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return None


def find_tools():
    """``(ptxas Tool or None, nvdisasm path or None)``."""
    from kerncast.frontend import find_ptxas

    return find_ptxas(), find_nvdisasm()


def missing_tools() -> str:
    """Why the SASS of a module cannot be had here ('' when ptxas and nvdisasm are)."""
    from kerncast.frontend import NO_PTXAS

    ptxas, nvdisasm = find_tools()
    return NO_PTXAS if ptxas is None else NO_NVDISASM if nvdisasm is None else ""


def tools_signature() -> str:
    """The ptxas and nvdisasm in use, as cache keys name them. Raises
    :class:`~kerncast.ToolchainError` (saying how to install them) when either is
    missing."""
    missing = missing_tools()
    if missing:
        raise ToolchainError(missing)
    ptxas, nvdisasm = find_tools()
    return f"{ptxas} {ptxas.path}; nvdisasm {nvdisasm}"


def _code_text(text: str) -> str:
    """The parts of ``nvdisasm`` output that :func:`parse_disassembly` reads (the code
    sections), which is what the cache keeps."""
    keep, out = False, []
    for raw in text.splitlines():
        if _ANY_SECTION.match(raw):
            keep = _SECTION.match(raw) is not None
        if keep:
            out.append(raw)
    return "\n".join(out) + "\n"


_RECENT: OrderedDict[str, Future] = OrderedDict()  # parsed code by cache key, newest last
_RECENT_SIZE = 16
_RECENT_LOCK = threading.Lock()


def assemble(ptx: str, arch: str = "sm_90", *, name: str = "module") -> SassCode:
    """The SASS of a PTX module's text: kept from an earlier call in this process (or
    being assembled by another thread, which is waited for), else from the disk cache,
    else from ptxas and nvdisasm.

    Raises
    ------
    ToolchainError
        When ptxas or nvdisasm is missing (with how to install it) or fails (naming
        ``name``, the kernel or module, and quoting the tool's message).
    """
    from kerncast.frontend import _cache

    tools = tools_signature()
    key = _key(ptx, arch, tools)
    digest = _cache.digest({**key, "root": str(_cache.cache_root())})
    with _RECENT_LOCK:
        pending = _RECENT.get(digest)
        if pending is None:
            _RECENT[digest] = mine = Future()
            while len(_RECENT) > _RECENT_SIZE:
                _RECENT.popitem(last=False)
        else:
            _RECENT.move_to_end(digest)
    if pending is not None:
        return pending.result()
    try:
        code = _assembled(ptx, arch, name, key)
    except BaseException as exc:
        with _RECENT_LOCK:
            _RECENT.pop(digest, None)
        mine.set_exception(exc)
        raise
    mine.set_result(code)
    return code


def _key(ptx: str, arch: str, tools: str) -> dict:
    """The disk cache's key of a module's disassembly."""
    from kerncast.frontend import _cache

    return {"layout": LAYOUT, "arch": arch, "tools": tools, "code_text": CODE_TEXT,
            "ptx": _cache.digest({"text": ptx})}


_INDIRECT = re.compile(r"\b(BRX|JMX)\b")


def _disassembled(nvdisasm: str, cubin: Path, name: str) -> str:
    """``nvdisasm -gp`` of ``cubin``. Its dataflow analysis (a third of its time) is
    skipped (``-ndf``) unless the code has indirect branches, whose targets only that
    analysis prints (``BRX R4 ... (*"BRANCH_TARGETS .L_x_39,..."*)``); the output is
    otherwise the same."""
    from kerncast.frontend import _process

    for argv in ([nvdisasm, "-gp", "-ndf", cubin], [nvdisasm, "-gp", cubin]):
        proc = _process.run_tool(argv)
        if proc.returncode != 0:
            message = (proc.stderr or proc.stdout).strip()
            raise ToolchainError(f"nvdisasm failed on the cubin of {name}: {message}")
        if not _INDIRECT.search(proc.stdout):
            break
    return proc.stdout


def _assembled(ptx: str, arch: str, name: str, key: dict) -> SassCode:
    """:func:`assemble` past the in-process memory: the disk cache, else the tools."""
    from kerncast.frontend import _cache, _process

    ptxas, nvdisasm = find_tools()
    stored = _cache.load("sass", key)
    if stored is not None and isinstance(stored.get("disassembly"), str):
        return parse_disassembly(stored["disassembly"], arch, key["tools"])
    with tempfile.TemporaryDirectory(prefix="kerncast-sass-") as tmp:
        src, cubin = Path(tmp) / "module.ptx", Path(tmp) / "module.cubin"
        src.write_text(ptx)
        proc = _process.run_tool([ptxas.path, f"-arch={arch}", "-lineinfo", "-o", cubin, src])
        if proc.returncode != 0:
            message = (proc.stderr or proc.stdout).strip().replace(str(src), f"{name}.ptx")
            raise ToolchainError(f"ptxas -arch={arch} failed on {name}: {message}")
        text = _disassembled(nvdisasm, cubin, name)
    text = _code_text(text)
    _cache.store("sass", key, {"disassembly": text})
    return parse_disassembly(text, arch, key["tools"])


# -- assembling many modules at once ----------------------------------------------------

_SHIFT = re.compile(r"(line )(\d+)")


def _parts(text: str, offsets: list[int]) -> dict[int, str]:
    """The batch's code sections cut back into each module's, with its names and PTX
    lines given back."""
    lines: dict[int, list[str]] = {}
    mine: list[str] | None = None
    index = -1
    for raw in _code_text(text).splitlines():
        section = _SECTION.match(raw)
        if section:
            found = batch_index(section.group(1))
            index = -1 if found is None else found
            mine = None if found is None else lines.setdefault(index, [])
        if mine is None:
            continue
        if _LINE.match(raw):
            raw = _SHIFT.sub(lambda m: f"{m.group(1)}{int(m.group(2)) - offsets[index]}", raw)
        mine.append(untagged(raw, index))
    return {i: _renumbered("\n".join(body) + "\n") for i, body in lines.items() if i >= 0}


#: names nvdisasm and ptxas number across the whole cubin: branch labels and the
#: internal subroutines (``$__internal_3_$__cuda_sm20_sqrt_rn_f32_slowpath``)
_NUMBERED = (re.compile(r"(\.L_x_)(\d+)"), re.compile(r"(\$__internal_)(\d+)(?=_)"))


def _renumbered(text: str) -> str:
    """A module's code with the names numbered across the batch numbered from 0, in
    order, as in a cubin of its own."""
    for pattern in _NUMBERED:
        order = {n: k for k, n in enumerate(sorted({int(m.group(2))
                                                    for m in pattern.finditer(text)}))}
        text = pattern.sub(lambda m: f"{m.group(1)}{order[int(m.group(2))]}", text)
    return text


def _assemble_batch(batch: list[tuple[str, dict, set[str]]], arch: str) -> int:
    """One ptxas and one nvdisasm run for ``batch`` ((PTX, cache key, top-level names)
    of modules with one header); each module's code is kept in the disk cache. Returns
    how many were kept (none where ptxas or nvdisasm fails on the batch: each module is
    then assembled alone when it is asked for, and its own error said)."""
    from kerncast.frontend import _cache, _process

    ptxas, nvdisasm = find_tools()
    texts, offsets, at = [], [], 0
    for index, (ptx, _, names) in enumerate(batch):
        texts.append(tagged(ptx, names, index, index == 0))
        offsets.append(at)
        at += texts[-1].count("\n") + 1
    with tempfile.TemporaryDirectory(prefix="kerncast-sass-") as tmp:
        src, cubin = Path(tmp) / "batch.ptx", Path(tmp) / "batch.cubin"
        src.write_text("\n".join(texts) + "\n")
        proc = _process.run_tool([ptxas.path, f"-arch={arch}", "-lineinfo", "-o", cubin, src])
        if proc.returncode != 0:
            return 0
        try:
            text = _disassembled(nvdisasm, cubin, "a batch of modules")
        except ToolchainError:
            return 0
    parts = _parts(text, offsets)
    for index, (_, key, _) in enumerate(batch):
        if index in parts:
            _cache.store("sass", key, {"disassembly": parts[index]})
    return len(parts)


def assemble_many(modules: list[str], arch: str = "sm_90") -> int:
    """Keep the SASS of every PTX module of ``modules`` in the disk cache, assembling
    those not there in batches of :data:`BATCH` (see the module). A module that declares
    an external function, source files, or global or constant data is left for
    :func:`assemble`, as is every module of a batch that ptxas or nvdisasm fails on.
    Returns how many modules were assembled here.

    Raises
    ------
    ToolchainError
        When ptxas or nvdisasm is missing (with how to install it).
    """
    from kerncast.frontend import _cache

    tools = tools_signature()
    groups: dict[tuple[str, ...], list[tuple[str, dict, set[str]]]] = {}
    seen: set[str] = set()
    for ptx in modules:
        key = _key(ptx, arch, tools)
        if key["ptx"] in seen or not shares_a_run(ptx) or _cache.holds("sass", key):
            continue
        seen.add(key["ptx"])
        names = declared_names(ptx)
        if names is not None:
            groups.setdefault(module_header(ptx), []).append((ptx, key, names))
    done = 0
    for group in groups.values():
        for start in range(0, len(group), BATCH):
            done += _assemble_batch(group[start:start + BATCH], arch)
    return done
