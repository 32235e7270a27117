"""PTX modules put together into one module, so that one ptxas run assembles them all.

ptxas starts in tens of milliseconds and nvdisasm in about 0.2 s whatever their input:
a sweep's hundreds of binaries cost those starts once per batch instead of once per
binary. Each module's top-level names are suffixed with its index in the batch
(:func:`tagged`), so that the batch's functions and sections name their module
(:func:`batch_index`); the modules after the first keep their lines, header turned into
comments, so that a line of the batch is its module's own plus an offset.

A module shares a run only where nothing of it depends on the others
(:func:`shares_a_run`, :func:`declared_names`): no function defined elsewhere, no
source files of its own, no global or constant data (ptxas lays such data out for the
whole batch, and an address that moves can change the code).
"""

from __future__ import annotations

import re

__all__ = ["BATCH", "batch_index", "declared_names", "module_header", "shares_a_run",
           "tag_of", "tagged", "untagged"]

#: modules assembled together by one ptxas (and one nvdisasm) run
BATCH = 48
_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b")
_ROUTINE = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_VARIABLE = re.compile(r"^\s*(?:\.(?:visible|weak|extern|common)\s+)*"
                       r"\.(global|shared|const|local)\b.*?\s([A-Za-z_$][\w$]*)\s*(?:\[|;|=)")
#: what makes a module unfit to share a ptxas run: a function defined elsewhere (the
#: declarations of several modules would clash) or source files of its own (``.file``)
_ALONE = re.compile(r"\.extern\s[^;{]*\.func\b|^\s*\.file\b", re.M)
_TAG = re.compile(r"__kcb(\d+)_")


def shares_a_run(ptx: str) -> bool:
    """Whether ``ptx`` declares no function defined elsewhere and no source files."""
    return not _ALONE.search(ptx)


def declared_names(ptx: str) -> set[str] | None:
    """The names a module declares at its top level (kernels, functions, shared
    variables), or None where it has global or constant data there: ptxas lays such data
    out for the whole batch, and an address that moves changes the code (dct8x8's table
    in constant memory takes one more instruction at another offset)."""
    names: set[str] = set()
    depth = 0
    for raw in ptx.splitlines():
        line = raw.split("//", 1)[0]
        if depth == 0:
            routine, variable = _ROUTINE.search(line), _VARIABLE.match(line)
            if routine:
                names.add(routine.group(1))
            elif variable and variable.group(1) != "shared":
                return None
            elif variable:
                names.add(variable.group(2))
        depth += line.count("{") - line.count("}")
    return names


def tagged(ptx: str, names: set[str], index: int, first: bool) -> str:
    """``ptx`` with its top-level ``names`` suffixed by the module's tag and, but for the
    first module of a batch, its header lines turned into comments (its line count
    kept, so that a PTX line of the batch is the module's own plus an offset)."""
    if names:
        pattern = re.compile(r"(?<![\w$%])(" + "|".join(map(re.escape, sorted(names))) +
                             r")(?![\w$])")
        ptx = pattern.sub(lambda m: tag_of(m.group(1), index), ptx)
    if not first:
        ptx = "\n".join("// " + line if _HEADER.match(line) else line
                        for line in ptx.splitlines())
    return ptx


def tag_of(name: str, index: int) -> str:
    """``name`` as :func:`tagged` renames it in module ``index`` of a batch."""
    return f"{name}__kcb{index}_"


def batch_index(name: str) -> int | None:
    """The index in its batch of the module a tagged name comes from; None where the
    name carries no tag."""
    tag = _TAG.search(name)
    return int(tag.group(1)) if tag else None


def untagged(text: str, index: int) -> str:
    """``text`` with module ``index``'s tag taken off its names."""
    return text.replace(tag_of("", index), "")


def module_header(ptx: str) -> tuple[str, ...]:
    """The module's ``.version``, ``.target`` and ``.address_size`` lines: modules share a
    batch only with the same ones."""
    return tuple(line.strip() for line in ptx.splitlines() if _HEADER.match(line))
