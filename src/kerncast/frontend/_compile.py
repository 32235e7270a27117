"""``kerncast.compile``: CUDA C++, OpenCL C or PTX in, a :class:`TranslationUnit` out."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kerncast._errors import InputError
from kerncast.frontend import _cache
from kerncast.frontend._arch import resolve_arch
from kerncast.frontend._languages import frontend_of
from kerncast.frontend._opencl import shim_digest
from kerncast.frontend._ptxscan import scan_target, scan_version
from kerncast.frontend._source import Source, language_of, read_source
from kerncast.frontend._toolchain import Tool
from kerncast.frontend._unit import TranslationUnit

__all__ = ["compile", "define_flags"]

_MACRO = re.compile(r"^[A-Za-z_]\w*$")


def define_flags(defines: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """Validated macros as strings and as ``-DNAME=VALUE`` flags (``None`` gives ``-DNAME``)."""
    clean: dict[str, str] = {}
    flags: list[str] = []
    for name, value in (defines or {}).items():
        if not _MACRO.match(str(name)):
            raise InputError(f"{name!r} is not a valid macro name; use letters, digits and _ "
                             f"(e.g. TILE=16)")
        if value is None:
            clean[name], flag = "", f"-D{name}"
        else:
            text = str(int(value)) if isinstance(value, bool) else str(value)
            clean[name], flag = text, f"-D{name}={text}"
        flags.append(flag)
    return clean, flags


def _options(options: str | Sequence[str] | None) -> list[str]:
    if options is None:
        return []
    if isinstance(options, str):
        return shlex.split(options)
    return [str(o) for o in options]


def _tool_identity(tool: Tool) -> dict:
    ident = {"name": tool.name, "version": tool.version}
    if tool.name == "clang":
        ident.update(libclc=tool.extra.get("libclc_sha256"), shim=shim_digest(),
                     archs=tool.extra.get("nvptx_archs"))
    if tool.name == "nvidia-opencl":
        ident["device"] = tool.extra.get("device")
    return ident


def _cache_key(source: Source, arch: str, defines: dict[str, str], options: list[str],
               includes: list[Path], tool: Tool) -> dict:
    return {"source_sha256": source.sha256, "source": source.display,
            "headers": sorted(source.include_digests(includes).values()),
            "language": source.language, "arch": arch, "defines": sorted(defines.items()),
            "options": options, "include_dirs": [str(p) for p in includes],
            "toolchain": _tool_identity(tool)}


def _from_ptx(source: Source, arch: str | None) -> TranslationUnit:
    target = scan_target(source.text)
    if target is None or ".entry" not in source.text:
        raise InputError(f"{source.display} does not look like PTX (no .target or no .entry); "
                         f"give a PTX module, or pass lang='cuda' or 'opencl'")
    version = scan_version(source.text)
    tool = Tool("ptx", f"ISA {version}" if version else "unknown", None, "as given")
    return TranslationUnit(ptx=source.text, language="ptx",
                           arch=resolve_arch(arch) if arch else resolve_arch(target),
                           ptx_target=target, toolchain=tool, source=source.display)


def _corpus_source(ref: str, lang: str | None,
                   defines: Mapping[str, Any] | None) -> tuple[Path, str, dict[str, Any]]:
    from kerncast.corpus import get_kernel  # noqa: PLC0415 (only for corpus: names)

    kernel = get_kernel(ref)
    language = language_of(lang, None) if lang else kernel.languages[0]
    if language == "ptx":
        raise InputError(f"corpus kernels are CUDA or OpenCL sources; {kernel.name} has "
                         f"{', '.join(kernel.languages)}")
    path = kernel.source_path(language)
    merged = {**kernel.launch("small").defines, **dict(defines or {})}
    return path, language, merged


def compile(  # noqa: A001 (the public name kerncast.compile)
    source: str | os.PathLike,
    lang: str | None = None,
    arch: str | None = None,
    defines: Mapping[str, Any] | None = None,
    options: str | Sequence[str] | None = None,
    *,
    toolchain: str = "auto",
    include_dirs: Sequence[str | os.PathLike] = (),
    name: str | None = None,
    cache: bool = True,
    ptxas_options: Sequence[str] = (),
) -> TranslationUnit:
    """Compile a CUDA C++, OpenCL C or PTX source to PTX and list its kernels.

    Parameters
    ----------
    source
        A path (``.cu``/``.cuh``, ``.cl``, ``.ptx``), ``corpus:NAME``, or source text.
    lang
        ``"cuda"``, ``"opencl"`` or ``"ptx"``; needed for text, else from the suffix.
    arch
        Target such as ``"sm_90"`` or a device name (its ``ptx_target``); default
        sm_90 (H100). Raw PTX defaults to its own ``.target``.
    defines
        Macros, ``{"TILE": 16}`` → ``-DTILE=16`` (``None`` as value → ``-DNAME``).
        For ``corpus:NAME`` the kernel's default defines come first.
    options
        Extra compiler options, passed through (a string is split like a shell).
    toolchain
        ``"auto"``; for CUDA ``"nvcc"`` or ``"nvrtc"``; for OpenCL ``"clang"`` or
        ``"nvidia-opencl"`` (NVIDIA's driver, on GPU machines).
    include_dirs
        Directories for ``#include`` (the source's own directory is always searched).
    name
        The name to show in messages for source text (default ``<source>``).
    cache
        Use the on-disk cache (``$KERNCAST_CACHE`` or ``~/.cache/kerncast/frontend``).
    ptxas_options
        Options for the assembler when resources are asked for (``--maxrregcount=32``).

    Returns
    -------
    TranslationUnit

    Raises
    ------
    InputError
        Bad arguments or a compile error (the message carries ``file:line: error:``).
    ToolchainError
        No compiler for the language, naming the packages that provide one.

    Examples
    --------
    >>> tu = kerncast.compile("saxpy.cu", defines={"N": 1024})  # doctest: +SKIP
    >>> tu.kernel("saxpy").resources().registers                 # doctest: +SKIP
    """
    if isinstance(source, str) and source.startswith("corpus:"):
        source, lang, defines = _corpus_source(source, lang, defines)
    src = read_source(source, lang, name)
    frontend = frontend_of(src.language)
    if frontend.build is None:  # PTX, taken as it is
        if defines or options:
            raise InputError(f"{src.display} is PTX, which takes no defines or compiler options; "
                             f"leave them out, or compile the CUDA/OpenCL source instead")
        unit = _from_ptx(src, arch)
        unit.ptxas_options = tuple(ptxas_options)
        return unit
    target = resolve_arch(arch)
    clean, flags = define_flags(defines)
    opts = _options(options)
    includes = [Path(p).expanduser().resolve() for p in include_dirs]
    flags += [f"-I{p}" for p in includes]
    tool = frontend.compiler(toolchain)
    key = _cache_key(src, target, clean, opts, includes, tool)
    stored = _cache.load("ptx", key) if cache else None
    hit = stored is not None and isinstance(stored.get("ptx"), str)
    if hit:
        ptx, notes = stored["ptx"], list(stored.get("notes", []))
    else:
        ptx, notes = frontend.build(tool, src, target, flags, opts)
        if cache:
            _cache.store("ptx", key, {"ptx": ptx, "notes": notes})
    return TranslationUnit(ptx=ptx, language=src.language, arch=target,
                           ptx_target=scan_target(ptx), toolchain=tool, source=src.display,
                           defines=clean, options=opts, notes=notes, cached=hit,
                           use_cache=cache, ptxas_options=tuple(ptxas_options))
