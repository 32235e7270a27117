"""What :func:`kerncast.compile` returns: a translation unit of PTX and its kernels."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from kerncast._errors import InputError, KerncastError, ToolchainError
from kerncast.frontend import _cache
from kerncast.frontend._arch import resolve_arch
from kerncast.frontend._ptxas import Resources, run_ptxas
from kerncast.frontend._ptxir import params_from_module, parse_quietly, parser
from kerncast.frontend._ptxscan import EntrySignature, LaunchBounds, Param, base_name, scan_entries
from kerncast.frontend._toolchain import Tool, require_ptxas

__all__ = ["Kernel", "TranslationUnit"]


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

    def _assemble(self, arch: str) -> dict[str, Resources]:
        tool = require_ptxas()
        key = {"ptx_sha256": self.sha256, "arch": arch, "ptxas": tool.version,
               **({"options": list(self.ptxas_options)} if self.ptxas_options else {})}
        stored = _cache.load("ptxas", key) if self._use_cache else None
        if stored is not None:
            try:
                return {e: Resources.from_dict(r) for e, r in stored["resources"].items()}
            except (KeyError, TypeError, ValueError):
                pass  # a stale or damaged entry: assemble again
        found = self._run_ptxas(tool, arch)
        if self._use_cache:
            _cache.store("ptxas", key, {"resources": {e: r.to_dict() for e, r in found.items()}})
        return found

    def _run_ptxas(self, tool: Tool, arch: str) -> dict[str, Resources]:
        report, per_kernel, module = run_ptxas(tool, self.ptx, arch, ptx_target=self.ptx_target,
                                               raw_ptx=self.language == "ptx", display=self.source,
                                               options=self.ptxas_options)
        found = {}
        for k in self.kernels:
            numbers = report.functions.get(k.entry)
            if numbers is None:
                raise ToolchainError(f"ptxas reported nothing for kernel {k.entry} of "
                                     f"{self.source}; run ptxas -v on the PTX to see why")
            cmem = {**numbers["cmem"], **per_kernel.get(k.entry, {})}
            fields = {n: v for n, v in numbers.items() if n != "cmem"}
            found[k.entry] = Resources(kernel=k.entry, arch=arch, **fields, cmem=cmem,
                                       module_cmem={**report.module_cmem, **module},
                                       gmem=report.gmem,
                                       launch_bounds=k.launch_bounds, toolchain=str(tool))
        return found

    def to_dict(self) -> dict:
        return {"source": self.source, "language": self.language, "arch": self.arch,
                "ptx_target": self.ptx_target, "toolchain": self.toolchain.to_dict(),
                "defines": self.defines, "options": self.options,
                "ptxas_options": list(self.ptxas_options), "notes": self.notes,
                "cached": self.cached, "kernels": [k.to_dict() for k in self.kernels]}
