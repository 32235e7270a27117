"""CUDA C++ to a cubin: NVRTC through cuda.bindings, else nvcc.

Both CUDA backends load the same cubin (CuPy through ``RawModule(path=...)``, the
driver-API backend through ``cuModuleLoadData``), so that a run on all SMs in a green
context and a CuPy run execute the same binary. Images are cached on disk
(``$KERNCAST_CACHE/cubin``, by default ``~/.cache/kerncast/cubin``) by a hash of the
source, the options, the target and the compiler's version: campaign workers compile
ahead on the CPU cores (no GPU needed) and the measuring process only loads.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from kerncast._errors import ToolchainError
from kerncast.measure._backend import CompileError

__all__ = ["compile_cubin", "cubin_file", "nvrtc_version"]


def _cache_dir() -> Path:
    root = Path(os.environ.get("KERNCAST_CACHE", Path.home() / ".cache" / "kerncast"))
    path = root / "cubin"
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=1)
def nvrtc_version() -> str:
    """NVRTC's version as "major.minor", or "" when cuda.bindings is missing."""
    try:
        from cuda.bindings import nvrtc  # noqa: PLC0415 (on use: cuda-python)

        _, major, minor = nvrtc.nvrtcVersion()
    except Exception:  # noqa: BLE001 (no bindings, or no libnvrtc to load: nvcc instead)
        return ""
    return f"{major}.{minor}"


def _nvrtc_check(result, what: str):
    from cuda.bindings import nvrtc  # noqa: PLC0415 (on use: cuda-python)

    err = result[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise ToolchainError(f"NVRTC {what} failed: {err}")
    return result[1] if len(result) == 2 else result[1:]


def _with_nvrtc(source: str, options: tuple[str, ...], arch: str, name: str) -> bytes:
    from cuda.bindings import nvrtc  # noqa: PLC0415 (on use: cuda-python)

    prog = _nvrtc_check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, None, None),
                        "create")
    try:
        opts = [o.encode() for o in (*options, f"--gpu-architecture={arch}")]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = _nvrtc_check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise CompileError(f"NVRTC build of {name} with {' '.join(options)} failed:\n"
                               f"{log.decode(errors='replace').strip(chr(0)).strip()}")
        size = _nvrtc_check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        image = b" " * size
        _nvrtc_check(nvrtc.nvrtcGetCUBIN(prog, image), "cubin")
        return image
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _with_nvcc(source: str, options: tuple[str, ...], arch: str, name: str) -> bytes:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        raise ToolchainError("neither cuda.bindings (NVRTC) nor nvcc is available to compile "
                             "CUDA; install cuda-bindings (pip install 'kerncast[cuda]')")
    with tempfile.TemporaryDirectory(prefix="kerncast-nvcc-") as tmp:
        src, out = Path(tmp) / name, Path(tmp) / "out.cubin"
        src.write_text(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", *options, "-o", str(out), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"nvcc build of {name} with {' '.join(options)} failed:\n"
                               f"{proc.stderr.strip()}")
        return out.read_bytes()


def cubin_file(source: str, options: tuple[str, ...], arch: str, name: str = "kernel.cu") -> Path:
    """The cached cubin file of ``source`` for ``arch`` (``"sm_90"``), compiled if needed.

    Raises
    ------
    CompileError
        With the compiler's log when the source does not compile.
    ToolchainError
        When neither NVRTC (cuda.bindings) nor nvcc is available.
    """
    use_nvrtc = bool(nvrtc_version())
    tag = f"nvrtc{nvrtc_version()}" if use_nvrtc else "nvcc"
    digest = hashlib.sha256("\0".join([source, *options, arch, tag]).encode()).hexdigest()[:24]
    cached = _cache_dir() / f"{digest}.cubin"
    if cached.exists():
        return cached
    build = _with_nvrtc if use_nvrtc else _with_nvcc
    image = build(source, tuple(options), arch, name)
    tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    tmp.write_bytes(image)
    tmp.replace(cached)
    return cached


def compile_cubin(source: str, options: tuple[str, ...], arch: str, name: str = "kernel.cu") -> bytes:
    """The cubin of ``source`` for ``arch``, compiled once and cached (see :func:`cubin_file`)."""
    return cubin_file(source, options, arch, name).read_bytes()
