"""CUDA C++ to PTX: NVRTC (through ctypes, from the PyPI wheel) or ``nvcc -ptx``.

NVRTC comes first: it is the compiler the measurement backends build with (CuPy and
cuda.bindings, :mod:`kerncast.measure._nvrtc`), with the same options (``-std=c++17``
and the defines), so the PTX predicted from is the PTX that ran. nvcc's front end
(``gcc -E`` with ``cuda_runtime.h``, then cicc) optimises differently: over the 652
launch variants of the H100 dataset, ptxas gives NVRTC's PTX the registers the measured
binary had in all 652, nvcc's in 564. NVRTC also runs in this process, about five times
faster than nvcc's three processes.
"""

from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

from kerncast._errors import InputError, ToolchainError
from kerncast.frontend._arch import compute_name
from kerncast.frontend._diagnostics import compile_error
from kerncast.frontend import _process
from kerncast.frontend._source import Source
from kerncast.frontend._toolchain import NO_CUDA, Tool, _load_nvrtc, find_nvcc, find_nvrtc

__all__ = ["compile_cuda", "select_cuda"]

NVRTC_SUCCESS = 0
NVRTC_ERROR_INVALID_OPTION = 5
NVRTC_ERROR_COMPILATION = 6


def select_cuda(toolchain: str = "auto") -> Tool:
    """The CUDA compiler to use: NVRTC, else nvcc (PATH, then wheel).

    Raises
    ------
    ToolchainError
        When none is installed (naming the wheels that provide one).
    """
    if toolchain == "nvcc":
        tool = find_nvcc()
    elif toolchain == "nvrtc":
        tool = find_nvrtc()
    else:
        tool = find_nvrtc() or find_nvcc()
    if tool is None:
        hint = {"nvcc": " (nvcc needs gcc on PATH to preprocess)", "nvrtc": ""}.get(toolchain, "")
        raise ToolchainError(NO_CUDA + hint)
    return tool


def compile_cuda(tool: Tool, source: Source, arch: str, flags: list[str],
                 options: list[str]) -> str:
    """PTX for ``source``; ``flags`` are ``-D``/``-I`` flags, ``options`` go to the compiler."""
    if tool.name == "nvrtc":
        return _nvrtc(tool, source, arch, flags, options)
    return _nvcc(tool, source, arch, flags, options)


def _nvcc(tool: Tool, source: Source, arch: str, flags: list[str], options: list[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="kerncast-nvcc-") as tmp:
        path, replacements = source.on_disk(Path(tmp), ".cu")
        out = Path(tmp) / "out.ptx"
        proc = _process.run_tool([tool.path, "-ptx", f"-arch={arch}", "-x", "cu", *flags, *options,
                         str(path), "-o", str(out)], cwd=tmp)
        if "Unsupported gpu architecture" in proc.stderr:
            raise _arch_error(tool, arch)
        if proc.returncode != 0 or not out.exists():
            raise compile_error("CUDA", source.display, str(tool), proc.stderr + proc.stdout,
                                replacements)
        return out.read_text()


def _arch_error(tool: Tool, arch: str) -> InputError:
    return InputError(f"{tool} cannot compile for {arch}; choose a target it supports "
                      f"(sm_75 or newer for CUDA 13, e.g. sm_80, sm_90)")


def _string(lib: ctypes.CDLL, size_fn: str, get_fn: str, prog: ctypes.c_void_p) -> str:
    size = ctypes.c_size_t()
    getattr(lib, size_fn)(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(max(size.value, 1))
    getattr(lib, get_fn)(prog, buf)
    return buf.value.decode(errors="replace")


def _nvrtc_check(lib: ctypes.CDLL, code: int, what: str) -> None:
    if code != NVRTC_SUCCESS:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        name = lib.nvrtcGetErrorString(code).decode()
        raise ToolchainError(f"NVRTC {what} failed with {name}; reinstall nvidia-cuda-nvrtc")


def _nvrtc(tool: Tool, source: Source, arch: str, flags: list[str], options: list[str]) -> str:
    lib = _load_nvrtc(tool.path)
    name = source.display
    # the measurement's options (kerncast.measure._cuda_common.nvrtc_options), nothing more
    opts = [f"--gpu-architecture={compute_name(arch)}", "-std=c++17", *flags, *options]
    if source.path is not None:
        opts.append(f"-I{source.path.parent}")
    if "include" in tool.extra:
        opts.append(f"-I{tool.extra['include']}")
    prog = ctypes.c_void_p()
    _nvrtc_check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.text.encode(),
                                             name.encode(), 0, None, None), "nvrtcCreateProgram")
    try:
        encoded = [o.encode() for o in opts]
        argv = (ctypes.c_char_p * len(encoded))(*encoded)
        code = lib.nvrtcCompileProgram(prog, len(encoded), argv)
        if code == NVRTC_ERROR_INVALID_OPTION:
            log = _string(lib, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", prog).strip()
            if "gpu-architecture" in log or not log:
                raise _arch_error(tool, arch)
            raise InputError(f"NVRTC rejected an option ({log}); check options=")
        if code == NVRTC_ERROR_COMPILATION:
            log = _string(lib, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", prog)
            raise compile_error("CUDA", source.display, str(tool), log)
        _nvrtc_check(lib, code, "nvrtcCompileProgram")
        return _string(lib, "nvrtcGetPTXSize", "nvrtcGetPTX", prog)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
