"""What :func:`kerncast.compile` returns: a translation unit of PTX and its kernels."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from kerncast._errors import InputError, KerncastError, ToolchainError
from kerncast.frontend import _cache
from kerncast.frontend._arch import resolve_arch
from kerncast.frontend._batch import (BATCH, declared_names, module_header,
                                      shares_a_run, tag_of, tagged)
from kerncast.frontend._ptxas import (PtxasReport, Resources, parse_cubin_constants,
                                      parse_verbose, run_ptxas, run_ptxas_log)
from kerncast.frontend._ptxir import params_from_module, parse_quietly, parser
from kerncast.frontend._ptxscan import EntrySignature, LaunchBounds, Param, base_name, scan_entries
from kerncast.frontend._toolchain import Tool, require_ptxas

__all__ = ["Kernel", "TranslationUnit", "assemble_resources"]


@dataclass(eq=False)
class Kernel:
    """One ``.entry`` of a translation unit.

    Attributes
    ----------
    name
        The source-level name (``matmul_tiled``; the base name of a mangled symbol).
    entry
        The PTX entry name (equal to ``name`` for ``extern "C"`` and OpenCL kernels).
    params
        The parameters, with PTX types and sizes, from the ``.entry`` signature.
    launch_bounds
        ``.maxntid``, ``.reqntid``, ``.minnctapersm`` and ``.maxnreg`` of the entry.
    unit
        The translation unit it belongs to.
    """

    name: str
    entry: str
    params: tuple[Param, ...]
    launch_bounds: LaunchBounds
    unit: TranslationUnit = field(repr=False)

    @property
    def ptx(self) -> str:
        """The PTX text of the whole module."""
        return self.unit.ptx

    @property
    def language(self) -> str:
        return self.unit.language

    @property
    def mangled(self) -> bool:
        return self.entry != self.name

    def resources(self, arch: str | None = None) -> Resources:
        """Resource usage on ``arch`` (default: the unit's arch), from ptxas."""
        return self.unit.resources(arch)[self.entry]

    @property
    def ir(self) -> Any:
        """This kernel's function in the parsed module (``kerncast.ptx``)."""
        module = self.unit.module
        if hasattr(module, "function"):
            return module.function(self.entry)
        return next(f for f in module.entries if f.name == self.entry)

    def to_dict(self) -> dict:
        return {"name": self.name, "entry": self.entry,
                "params": [p.to_dict() for p in self.params],
                "launch_bounds": self.launch_bounds.to_dict()}


class TranslationUnit:
    """A compiled source: PTX, the kernels in it, and how it was made.

    Attributes
    ----------
    ptx
        The PTX text.
    language
        ``cuda``, ``opencl`` or ``ptx``.
    arch
        The target asked for (``sm_90``); resources default to it.
    ptx_target
        The PTX's own ``.target`` (``sm_86`` for OpenCL through clang 14).
    toolchain
        The compiler that made the PTX (:class:`Tool`: name, version, path, origin).
    source
        The source's name as the user gave it (``<source>`` for text).
    defines, options
        The ``-D`` macros and extra compiler options used.
    notes
        Remarks on the build (e.g. the target clang generated for).
    cached
        Whether the PTX came from the on-disk cache.
    kernels
        The :class:`Kernel` objects, in file order.
    """

    def __init__(self, *, ptx: str, language: str, arch: str, ptx_target: str | None,
                 toolchain: Tool, source: str, defines: dict[str, str] | None = None,
                 options: list[str] | None = None, notes: list[str] | None = None,
                 cached: bool = False, use_cache: bool = True,
                 ptxas_options: tuple[str, ...] = ()) -> None:
        self.ptx, self.language, self.arch = ptx, language, arch
        self.ptx_target, self.toolchain, self.source = ptx_target, toolchain, source
        self.defines = dict(defines or {})
        self.options = list(options or [])
        self.notes = list(notes or [])
        self.cached = cached
        self.ptxas_options = tuple(ptxas_options)
        self._use_cache = use_cache
        self._resources: dict[str, dict[str, Resources]] = {}
        self._module: Any = parse_quietly(ptx)
        parsed = params_from_module(self._module) or {}
        self.kernels = [self._kernel(sig, parsed.get(sig.name)) for sig in scan_entries(ptx)]

    def _kernel(self, sig: EntrySignature, params: tuple[Param, ...] | None) -> Kernel:
        return Kernel(base_name(sig.name), sig.name, params or sig.params, sig.bounds, self)

    def __repr__(self) -> str:
        names = ", ".join(k.entry for k in self.kernels)
        return (f"TranslationUnit({self.source!r}, {self.language}, {self.arch}, "
                f"{self.toolchain}, kernels=[{names}])")

    @property
    def module(self) -> Any:
        """The PTX parsed by ``kerncast.ptx.parse`` (once, when the unit is made; again
        on first use if that failed, so that the parser's error reaches the caller).

        Raises
        ------
        KerncastError
            While kerncast's PTX parser is not installed.
        """
        if self._module is None:
            parse = parser()
            if parse is None:
                raise KerncastError("the PTX parser (kerncast.ptx.parse) is not available in "
                                    "this installation; update kerncast")
            self._module = parse(self.ptx)
        return self._module

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.ptx.encode()).hexdigest()

    def kernel(self, name: str) -> Kernel:
        """The kernel whose entry or source name is ``name``.

        Raises
        ------
        InputError
            When no kernel (or more than one) has that name; lists the kernels.
        """
        exact = [k for k in self.kernels if k.entry == name]
        if exact:
            return exact[0]
        by_name = [k for k in self.kernels if k.name == name]
        if len(by_name) == 1:
            return by_name[0]
        entries = [k.entry for k in self.kernels]
        if by_name:
            raise InputError(f"{len(by_name)} kernels in {self.source} are named {name!r} "
                             f"({', '.join(k.entry for k in by_name)}); ask for one by its "
                             f"entry name")
        close = difflib.get_close_matches(name, entries + [k.name for k in self.kernels], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        listed = ", ".join(entries) or "none"
        raise InputError(f"no kernel {name!r} in {self.source}{hint} (its kernels: {listed})")

    def resources(self, arch: str | None = None) -> dict[str, Resources]:
        """Resource usage of every kernel on ``arch``, by entry name (one ptxas run,
        cached on disk by PTX, arch and ptxas version)."""
        target = resolve_arch(arch) if arch is not None else self.arch
        if target not in self._resources:
            self._resources[target] = self._assemble(target)
        return self._resources[target]

    def _ptxas_key(self, tool: Tool, arch: str) -> dict:
        """The disk cache's key of this unit's resources on ``arch``."""
        return {"ptx_sha256": self.sha256, "arch": arch, "ptxas": tool.version,
                **({"options": list(self.ptxas_options)} if self.ptxas_options else {})}

    def _assemble(self, arch: str) -> dict[str, Resources]:
        tool = require_ptxas()
        key = self._ptxas_key(tool, arch)
        stored = _cache.load("ptxas", key) if self._use_cache else None
        if stored is not None:
            try:
                return {e: Resources.from_dict(r) for e, r in stored["resources"].items()}
            except (KeyError, TypeError, ValueError):
                pass  # a stale or damaged entry: assemble again
        found = self._run_ptxas(tool, arch)
        if self._use_cache:
            self._store(tool, arch, found)
        return found

    def _run_ptxas(self, tool: Tool, arch: str) -> dict[str, Resources]:
        report, per_kernel, module = run_ptxas(tool, self.ptx, arch, ptx_target=self.ptx_target,
                                               raw_ptx=self.language == "ptx", display=self.source,
                                               options=self.ptxas_options)
        found = self._reported(report, per_kernel, {**report.module_cmem, **module}, tool, arch)
        if found is None:
            missing = next(k.entry for k in self.kernels if k.entry not in report.functions)
            raise ToolchainError(f"ptxas reported nothing for kernel {missing} of "
                                 f"{self.source}; run ptxas -v on the PTX to see why")
        return found

    def _reported(self, report: PtxasReport, per_kernel: dict, module_cmem: dict, tool: Tool,
                  arch: str, name: Callable[[str], str] = str) -> dict[str, Resources] | None:
        """Every kernel's resources from a ptxas report and its cubin's constant banks,
        each kernel found under ``name(entry)``; None where the report lacks one."""
        found = {}
        for k in self.kernels:
            numbers = report.functions.get(name(k.entry))
            if numbers is None:
                return None
            cmem = {**numbers["cmem"], **per_kernel.get(name(k.entry), {})}
            fields = {n: v for n, v in numbers.items() if n != "cmem"}
            found[k.entry] = Resources(kernel=k.entry, arch=arch, **fields, cmem=cmem,
                                       module_cmem=module_cmem, gmem=report.gmem,
                                       launch_bounds=k.launch_bounds, toolchain=str(tool))
        return found

    def _store(self, tool: Tool, arch: str, found: dict[str, Resources]) -> None:
        """Keep ``found`` in the disk cache as this unit's resources on ``arch``."""
        _cache.store("ptxas", self._ptxas_key(tool, arch),
                     {"resources": {e: r.to_dict() for e, r in found.items()}})

    def to_dict(self) -> dict:
        return {"source": self.source, "language": self.language, "arch": self.arch,
                "ptx_target": self.ptx_target, "toolchain": self.toolchain.to_dict(),
                "defines": self.defines, "options": self.options,
                "ptxas_options": list(self.ptxas_options), "notes": self.notes,
                "cached": self.cached, "kernels": [k.to_dict() for k in self.kernels]}


def assemble_resources(units: list[TranslationUnit], arch: str | None = None) -> int:
    """Keep in the disk cache the resources of every unit of ``units`` on ``arch`` (each
    unit's own where None), assembled by one ptxas run per batch of :data:`BATCH`
    (:mod:`kerncast.frontend._batch`): a sweep's binaries, before it predicts them. A
    unit that cannot share a run, and every unit of a batch that ptxas fails on or whose
    report cannot be told apart by module (constant banks of the whole module), is left
    to :meth:`TranslationUnit.resources`, which reports its own error. Returns how many
    units were assembled here.

    Raises
    ------
    ToolchainError
        When ptxas is missing (with how to install it).
    """
    tool = require_ptxas()
    groups: dict[tuple, list[tuple[TranslationUnit, set[str]]]] = {}
    seen: set[tuple[str, str]] = set()
    for unit in units:
        target = resolve_arch(arch) if arch is not None else unit.arch
        if not unit._use_cache or (unit.sha256, target) in seen or not shares_a_run(unit.ptx) \
                or _cache.holds("ptxas", unit._ptxas_key(tool, target)):
            continue
        seen.add((unit.sha256, target))
        names = declared_names(unit.ptx)
        if names is not None:
            groups.setdefault((module_header(unit.ptx), target, unit.ptxas_options),
                              []).append((unit, names))
    done = 0
    for (_, target, options), group in groups.items():
        for start in range(0, len(group), BATCH):
            done += _resources_batch(tool, group[start:start + BATCH], target, options)
    return done


def _resources_batch(tool: Tool, batch: list[tuple[TranslationUnit, set[str]]], arch: str,
                     options: tuple[str, ...]) -> int:
    """One ptxas run for ``batch`` ((unit, its top-level names), one header and ptxas
    options); each unit's resources kept in the disk cache. Returns how many were kept:
    none where ptxas fails, or where the batch has constant banks or global data of the
    module, which no single unit's report could be told from."""
    text = "\n".join(tagged(unit.ptx, names, index, index == 0)
                     for index, (unit, names) in enumerate(batch)) + "\n"
    ran = run_ptxas_log(tool, text, arch, options)
    if ran is None:
        return 0
    log, cubin = ran
    report = parse_verbose(log)
    per_kernel, module = parse_cubin_constants(cubin)
    if module or report.module_cmem or report.gmem:
        return 0
    done = 0
    for index, (unit, _) in enumerate(batch):
        found = unit._reported(report, per_kernel, {}, tool, arch,
                               name=lambda entry, i=index: tag_of(entry, i))
        if found is not None:
            unit._store(tool, arch, found)
            done += 1
    return done
