"""OpenCL C to PTX: clang's NVPTX back end with libclc, or NVIDIA's OpenCL driver.

clang route (any machine)::

    clang-14 -cl-std=CL1.2 -target nvptx64-unknown-nvidiacl -march=sm_86 -O2
             -Xclang -mlink-bitcode-file -Xclang /usr/lib/clc/nvptx64--nvidiacl.bc
             -include clc/clc.h -include kc_opencl_native.h -S -o out.ptx in.cl

clang 14 knows NVPTX targets up to sm_86: the PTX is generated for the newest target
clang knows that is not newer than the one asked for, and ptxas assembles it for the
target asked for. ``kc_opencl_native.h`` (``frontend/include``) maps ``native_*`` and
``half_*`` math to the full-precision built-ins, which libclc can lower.

NVIDIA route (``toolchain="nvidia-opencl"``, a machine with NVIDIA's OpenCL driver):
PyOpenCL builds the program on the NVIDIA platform; the program binary is PTX for
the GPU present.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from kerncast._errors import ToolchainError
from kerncast.frontend._arch import arch_number
from kerncast.frontend._diagnostics import compile_error
from kerncast.frontend import _process
from kerncast.frontend._source import Source
from kerncast.frontend._toolchain import NO_CLANG, Tool, find_clang

__all__ = ["SHIM", "clang_arch", "compile_opencl", "select_opencl"]

SHIM = Path(__file__).with_name("include") / "kc_opencl_native.h"
NO_NVIDIA_OPENCL = (
    "no NVIDIA OpenCL platform found: toolchain='nvidia-opencl' needs PyOpenCL "
    "(pip install pyopencl) and NVIDIA's driver with its OpenCL ICD; use toolchain='clang' "
    "on other machines"
)


def shim_digest() -> str:
    return hashlib.sha256(SHIM.read_bytes()).hexdigest()[:16]


def _import_pyopencl() -> Any:
    try:
        import pyopencl  # noqa: PLC0415 (optional, GPU machines only)
    except ImportError:
        return None
    return pyopencl


def _nvidia_device(cl: Any) -> Any | None:
    try:
        platforms = cl.get_platforms()
    except Exception:  # no ICD loader or no platform at all  # noqa: BLE001
        return None
    for platform in platforms:
        if "nvidia" in f"{platform.name} {platform.vendor}".lower():
            devices = platform.get_devices()
            if devices:
                return devices[0]
    return None


def _nvidia_tool() -> Tool | None:
    cl = _import_pyopencl()
    device = _nvidia_device(cl) if cl is not None else None
    if device is None:
        return None
    version = f"{device.platform.version.strip()}, driver {device.driver_version}"
    return Tool("nvidia-opencl", version, None, device.name, {"device": device.name})


def select_opencl(toolchain: str = "auto") -> Tool:
    """clang + libclc (default), or NVIDIA's OpenCL driver when asked for or when clang
    is missing and the driver is there.

    Raises
    ------
    ToolchainError
        When the chosen toolchain (or, for ``auto``, either) is missing.
    """
    if toolchain == "nvidia-opencl":
        tool = _nvidia_tool()
        if tool is None:
            raise ToolchainError(NO_NVIDIA_OPENCL)
        return tool
    tool = find_clang()
    if tool is None and toolchain == "auto":
        tool = _nvidia_tool()
    if tool is None:
        raise ToolchainError(NO_CLANG)
    return tool


def clang_arch(requested: str, known: str) -> str:
    """The newest target in ``known`` (comma-separated) not newer than ``requested``."""
    number = arch_number(requested)
    archs = sorted((arch_number(a), a) for a in known.split(",") if a)
    fitting = [a for n, a in archs if n <= number]
    return fitting[-1] if fitting else requested


def compile_opencl(tool: Tool, source: Source, arch: str, flags: list[str],
                   options: list[str]) -> tuple[str, list[str]]:
    """PTX for ``source`` and notes on what was done (e.g. the target clang used)."""
    if tool.name == "nvidia-opencl":
        return _nvidia(tool, source, flags, options)
    target = clang_arch(arch, tool.extra.get("nvptx_archs", "sm_86"))
    notes = []
    if target != arch:
        notes.append(f"clang {tool.version} generates PTX for at most {target}; the PTX "
                     f"targets {target} and ptxas assembles it for {arch}")
    with tempfile.TemporaryDirectory(prefix="kerncast-clang-") as tmp:
        path, replacements = source.on_disk(Path(tmp), ".cl")
        out = Path(tmp) / "out.ptx"
        includes = [f"-I{tool.extra['include']}"] if "include" in tool.extra else []
        argv = [tool.path, "-fno-crash-diagnostics", "-cl-std=CL1.2", "-target",
                "nvptx64-unknown-nvidiacl", f"-march={target}", "-O2", "-Xclang",
                "-mlink-bitcode-file", "-Xclang", tool.extra["libclc"], *includes,
                "-include", "clc/clc.h", "-include", str(SHIM), *flags, *options,
                "-x", "cl", "-S", "-o", str(out), str(path)]
        proc = _process.run_tool(argv, cwd=tmp)
        if proc.returncode != 0 or not out.exists():
            raise compile_error("OpenCL", source.display, str(tool), proc.stderr + proc.stdout,
                                replacements)
        return out.read_text(), notes


def _nvidia(tool: Tool, source: Source, flags: list[str],
            options: list[str]) -> tuple[str, list[str]]:
    cl = _import_pyopencl()
    device = _nvidia_device(cl) if cl is not None else None
    if device is None:
        raise ToolchainError(NO_NVIDIA_OPENCL)
    context = cl.Context([device])
    build = ["-cl-std=CL1.2", *flags, *options]
    if source.path is not None:
        build.append(f"-I{source.path.parent}")
    try:
        program = cl.Program(context, source.text).build(options=build)
    except cl.RuntimeError as exc:
        raise compile_error("OpenCL", source.display, str(tool), str(exc),
                            {"<kernel>": source.display}) from None
    binary = program.binaries[0]
    ptx = (binary.decode(errors="replace") if isinstance(binary, bytes) else str(binary))
    if ".entry" not in ptx:
        raise ToolchainError(f"the NVIDIA OpenCL driver returned no PTX for {source.display}; "
                             f"use toolchain='clang'")
    return ptx.rstrip("\0"), [f"built by NVIDIA's OpenCL driver for the {device.name} present"]
