"""A light scan of PTX text: target, version, kernel signatures and launch bounds.

This reads only the module header and the ``.entry`` signatures; kerncast's PTX
parser (``kerncast.ptx``) owns bodies, CFGs and loops.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from kerncast._errors import InputError

__all__ = [
    "EntrySignature",
    "LaunchBounds",
    "Param",
    "base_name",
    "scan_entries",
    "scan_target",
    "scan_version",
    "strip_comments",
]

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_IDENT = r"[A-Za-z_$%][\w$]*"
_ENTRY = re.compile(
    rf"(?P<link>(?:\.visible|\.weak|\.extern)\s+)?\.entry\s+(?P<name>{_IDENT})\s*"
    r"(?:\((?P<params>[^)]*)\))?(?P<directives>[^{;]*)\{"
)
_PARAM = re.compile(rf"\.param\s+(?P<attrs>(?:\.\w+(?:\s+\d+)?\s+)*)(?P<name>{_IDENT})"
                    r"\s*(?:\[\s*(?P<count>\d+)\s*\])?")
_TARGET = re.compile(r"^\s*\.target\s+([\w, ]+)$", re.MULTILINE)
_VERSION = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.MULTILINE)
_TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_SPACES = ("global", "shared", "const", "local")


@dataclass(frozen=True)
class Param:
    """One kernel parameter as the ``.entry`` signature declares it.

    ``type`` is the PTX type without its dot (``u64``, ``f32``, ``b8``); ``size`` is
    in bytes (element size times ``count`` for ``.b8 p[16]`` aggregates); ``space``
    is the pointee state space when the PTX says it (``.ptr .global``), else ``None``.
    """

    index: int
    name: str
    type: str
    size: int
    align: int
    count: int = 1
    space: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LaunchBounds:
    """Performance directives of an entry: ``.maxntid``, ``.reqntid``, ``.minnctapersm``,
    ``.maxnreg`` (``None`` where absent)."""

    max_threads: tuple[int, ...] | None = None
    required_threads: tuple[int, ...] | None = None
    min_blocks_per_sm: int | None = None
    max_registers: int | None = None

    @property
    def thread_limit(self) -> int | None:
        """The most threads per block the directives allow, or ``None``."""
        dims = self.required_threads or self.max_threads
        if dims is None:
            return None
        total = 1
        for d in dims:
            total *= d
        return total

    def to_dict(self) -> dict:
        return {**asdict(self), "thread_limit": self.thread_limit}


@dataclass(frozen=True)
class EntrySignature:
    """An ``.entry`` of a PTX module: its name, linkage, parameters and bounds."""

    name: str
    linkage: str
    params: tuple[Param, ...]
    bounds: LaunchBounds


def strip_comments(ptx: str) -> str:
    return _COMMENTS.sub(" ", ptx)


def _type_size(ptype: str) -> int:
    if ptype == "pred":
        return 1
    digits = re.search(r"(\d+)", ptype)
    if digits is None or digits.group(1) not in _TYPE_BYTES:
        raise InputError(f"PTX parameter type .{ptype} is not understood; check the .entry line")
    return _TYPE_BYTES[digits.group(1)] * (2 if ptype.endswith("x2") else 1)


def _param(index: int, text: str) -> Param:
    match = _PARAM.search(text)
    if match is None:
        raise InputError(f"cannot read the PTX parameter {text.strip()!r}; expected "
                         f"'.param .TYPE NAME'")
    tokens = match["attrs"].split()
    ptype, align, space = "", 0, None
    for i, tok in enumerate(tokens):
        word = tok.lstrip(".")
        if word == "align" and i + 1 < len(tokens):
            align = int(tokens[i + 1])
        elif word in _SPACES:
            space = word
        elif word != "ptr" and not word.isdigit():
            ptype = word
    count = int(match["count"]) if match["count"] else 1
    elem = _type_size(ptype)
    return Param(index=index, name=match["name"], type=ptype, size=elem * count,
                 align=align or elem, count=count, space=space)


def _dims(directives: str, name: str) -> tuple[int, ...] | None:
    match = re.search(rf"\.{name}\s+(\d+(?:\s*,\s*\d+)*)", directives)
    return tuple(int(v) for v in match.group(1).split(",")) if match else None


def _bounds(directives: str) -> LaunchBounds:
    blocks = _dims(directives, "minnctapersm")
    regs = _dims(directives, "maxnreg")
    return LaunchBounds(
        max_threads=_dims(directives, "maxntid"),
        required_threads=_dims(directives, "reqntid"),
        min_blocks_per_sm=blocks[0] if blocks else None,
        max_registers=regs[0] if regs else None,
    )


def scan_entries(ptx: str) -> list[EntrySignature]:
    """Every ``.entry`` of the module, in file order."""
    text = strip_comments(ptx)
    entries = []
    for match in _ENTRY.finditer(text):
        raw = [p for p in (match["params"] or "").split(",") if p.strip()]
        params = tuple(_param(i, p) for i, p in enumerate(raw))
        linkage = (match["link"] or "").strip().lstrip(".")
        entries.append(EntrySignature(match["name"], linkage, params, _bounds(match["directives"])))
    return entries


def scan_target(ptx: str) -> str | None:
    """The module's ``.target`` arch (``sm_86``), or ``None``."""
    match = _TARGET.search(strip_comments(ptx))
    if match is None:
        return None
    first = match.group(1).split(",")[0].strip()
    return first or None


def scan_version(ptx: str) -> str | None:
    """The module's PTX ISA ``.version`` (``9.0``), or ``None``."""
    match = _VERSION.search(strip_comments(ptx))
    return match.group(1) if match else None


def _source_names(text: str) -> list[str]:
    parts = []
    while text and text[0].isdigit():
        digits = re.match(r"\d+", text).group(0)
        length = int(digits)
        start = len(digits)
        parts.append(text[start:start + length])
        text = text[start + length:]
    return parts


def base_name(symbol: str) -> str:
    """The source name of an Itanium-mangled kernel (``_Z2k2IfEvPT_d`` gives ``k2``,
    ``_ZN2ns4scanEPf`` gives ``ns::scan``); other symbols are returned as they are."""
    if not symbol.startswith("_Z"):
        return symbol
    rest = symbol[2:]
    nested = rest.startswith("N")
    parts = _source_names(rest[1:] if nested else rest)
    return "::".join(parts) if parts and all(parts) else symbol
