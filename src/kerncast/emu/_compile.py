"""Private helper: CUDA / OpenCL source to PTX with nvcc and clang-14, cached on disk.

This stands in for ``kerncast.compile`` (the frontend layer) until that lands; it
runs the same two commands the frontend uses and keeps results in a cache
directory keyed by the source text, the defines and the command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kerncast._errors import InputError, ToolchainError

__all__ = ["compile_to_ptx", "cache_dir"]

_CLC = "/usr/lib/clc/nvptx64--nvidiacl.bc"


def cache_dir() -> Path:
    root = os.environ.get("KERNCAST_EMU_CACHE") or os.path.join(tempfile.gettempdir(),
                                                                "kerncast-emu-ptx")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _nvcc() -> str:
    """nvcc on PATH, else the ``nvidia-cuda-nvcc`` wheel's (``nvidia/cu13/bin/nvcc``)."""
    found = shutil.which("nvcc")
    if found:
        return found
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(root) / "cu13" / "bin" / "nvcc"
        if candidate.is_file():
            return str(candidate)
    return "nvcc"


def _command(language: str, source: Path, out: Path, defines: dict, arch: str) -> list[str]:
    flags = [f"-D{k}={v}" for k, v in sorted(defines.items())]
    if language == "cuda":
        return [_nvcc(), "-ptx", f"-arch={arch}", *flags, "-o", str(out), str(source)]
    if language == "opencl":
        clang = shutil.which("clang-14") or "clang-14"
        return [clang, "-cl-std=CL1.2", "-target", "nvptx64-unknown-nvidiacl", "-march=sm_86",
                "-O2", "-Xclang", "-mlink-bitcode-file", "-Xclang", _CLC, "-include",
                "clc/clc.h", *flags, "-S", "-o", str(out), str(source)]
    raise InputError(f"unknown language {language!r}; use 'cuda' or 'opencl'")


def compile_to_ptx(source: str | Path, language: str = "cuda", defines: dict | None = None,
                   arch: str = "sm_90") -> str:
    """PTX text of a CUDA (``.cu``) or OpenCL (``.cl``) source file or text.

    Raises
    ------
    ToolchainError
        When the compiler is missing or fails (its messages are included).
    """
    defines = dict(defines or {})
    text = Path(source).read_text() if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and Path(source).exists()) else source
    key = hashlib.sha256(repr((text, sorted(defines.items()), language, arch)).encode())
    cached = cache_dir() / f"{key.hexdigest()[:32]}.ptx"
    if cached.exists():
        return cached.read_text()
    suffix = ".cu" if language == "cuda" else ".cl"
    with tempfile.TemporaryDirectory(prefix="kerncast-emu-") as tmp:
        src = Path(tmp) / f"kernel{suffix}"
        src.write_text(text)
        out = Path(tmp) / "kernel.ptx"
        cmd = _command(language, src, out, defines, arch)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except FileNotFoundError:
            raise ToolchainError(f"{cmd[0]} is not installed; it is needed to compile "
                                 f"{language} for the emulator") from None
        if done.returncode != 0 or not out.exists():
            raise ToolchainError(f"{Path(cmd[0]).name} failed on the {language} source:\n"
                                 f"{done.stderr.strip()[:2000]}")
        ptx = out.read_text()
    tmp_file = cached.with_suffix(f".{os.getpid()}.tmp")
    tmp_file.write_text(ptx)
    tmp_file.replace(cached)
    return ptx
