"""Finding the compilers: nvcc, NVRTC and ptxas (PATH or NVIDIA's wheels), clang + libclc.

Discovery order
---------------
CUDA C++ (``toolchain="auto"``):
    1. NVRTC: ``libnvrtc.so.13`` of the ``nvidia-cuda-nvrtc`` wheel, else a
       ``libnvrtc`` the dynamic loader finds (the compiler the measured binaries were
       built with, see :mod:`kerncast.frontend._cuda`);
    2. ``nvcc`` on ``PATH`` (with a host compiler, ``gcc``, on ``PATH``: nvcc
       preprocesses with it);
    3. the ``nvidia-cuda-nvcc`` wheel's ``nvidia/cu13/bin/nvcc`` (needs the
       ``nvidia-nvvm``, ``nvidia-cuda-crt`` and ``nvidia-cuda-runtime`` wheels, and gcc).
ptxas: ``ptxas`` on ``PATH``, else the ``nvidia-cuda-nvcc`` wheel's.
OpenCL C: ``clang-14`` (or ``clang`` of version 14 or newer) with libclc's
``nvptx64--nvidiacl.bc`` from ``$KERNCAST_LIBCLC`` or ``/usr/lib/clc``.

Version strings (part of every cache key) come from the wheels' metadata, from
NVRTC itself, or from ``TOOL --version``, memoised by the tool's path, size and
modification time so that a cache hit runs no process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from kerncast._errors import ToolchainError
from kerncast.frontend import _cache
from kerncast.frontend import _process

__all__ = [
    "NO_CLANG",
    "NO_CUDA",
    "NO_PTXAS",
    "Tool",
    "find_clang",
    "find_nvcc",
    "find_nvrtc",
    "find_ptxas",
    "require_ptxas",
    "wheel_root",
]

CUDA_PIN = "13.0.88"
NO_CUDA = (
    f"no CUDA compiler found: install the wheels with pip install nvidia-cuda-nvcc=={CUDA_PIN} "
    f"nvidia-nvvm=={CUDA_PIN} nvidia-cuda-crt=={CUDA_PIN} (or nvidia-cuda-nvrtc=={CUDA_PIN}), "
    f"or put nvcc on PATH"
)
NO_CLANG = "clang-14 with libclc is needed for OpenCL C: apt-get install clang-14 libclc-14"
NO_PTXAS = (
    f"ptxas not found: install the wheel with pip install nvidia-cuda-nvcc=={CUDA_PIN}, "
    f"or put ptxas on PATH"
)
LIBCLC_DIRS = (Path("/usr/lib/clc"), Path("/usr/share/clc"), Path("/usr/lib/llvm-14/lib/clc"))
LIBCLC_FILE = "nvptx64--nvidiacl.bc"


@dataclass(frozen=True)
class Tool:
    """A compiler found on this machine.

    ``name`` is one of ``nvcc``, ``nvrtc``, ``ptxas``, ``clang``, ``nvidia-opencl`` or
    ``ptx`` (raw PTX, no compiler); ``origin`` says where it was found; ``extra`` holds
    route-specific paths (libclc, include directories, the most recent arch clang knows).
    """

    name: str
    version: str
    path: str | None = None
    origin: str = ""
    extra: dict[str, str] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    def to_dict(self) -> dict:
        return asdict(self)


# --- the NVIDIA wheels ---------------------------------------------------------------


def wheel_root() -> Path | None:
    """``.../site-packages/nvidia/cu13`` of NVIDIA's CUDA 13 wheels, if installed."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location) / "cu13"
        if root.is_dir():
            return root
    return None


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# --- versions of tools on PATH -------------------------------------------------------

# Most precise first: nvcc/ptxas print "release 13.0, V13.0.88", clang "version 14.0.6".
_VERSIONS = (re.compile(r"\bV(\d+\.\d+\.\d+)"), re.compile(r"version (\d+\.\d+\.\d+)"),
             re.compile(r"release (\d+\.\d+)"))


def _parse_version(text: str) -> str:
    for pattern in _VERSIONS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return text.strip().splitlines()[0] if text.strip() else "unknown"


def _probe_key(path: str, probe: tuple[str, ...]) -> dict:
    st = os.stat(path)
    real = os.path.realpath(path)
    rst = os.stat(real)
    return {"path": path, "real": real, "size": rst.st_size, "mtime": rst.st_mtime_ns,
            "link_mtime": st.st_mtime_ns, "probe": list(probe)}


_MEMO: dict[str, dict] = {}


def _probe(path: str, *args: str) -> str:
    """Output of ``path args`` (e.g. ``--version``), memoised in memory and on disk."""
    key = _probe_key(path, args)
    k = _cache.digest(key)
    if k in _MEMO:
        return _MEMO[k]["output"]
    stored = _cache.load("tools", key)
    if stored is None:
        proc = _process.run_tool([path, *args])
        stored = {"output": proc.stdout + proc.stderr}
        if proc.returncode == 0:
            _cache.store("tools", key, stored)
    _MEMO[k] = stored
    return stored["output"]


# --- CUDA: nvcc, NVRTC, ptxas --------------------------------------------------------


def _host_compiler() -> str | None:
    return shutil.which("gcc")


def find_nvcc() -> Tool | None:
    """nvcc on PATH, else the wheel's; ``None`` without nvcc or without gcc."""
    if _host_compiler() is None:
        return None
    path = shutil.which("nvcc")
    if path:
        return Tool("nvcc", _parse_version(_probe(path, "--version")), path, "PATH")
    root = wheel_root()
    if root is None:
        return None
    nvcc = root / "bin" / "nvcc"
    needed = (nvcc, root / "nvvm" / "bin" / "cicc", root / "include" / "crt" / "host_config.h",
              root / "include" / "cuda_runtime.h")
    if not all(p.is_file() for p in needed) or not os.access(nvcc, os.X_OK):
        return None
    version = _dist_version("nvidia-cuda-nvcc") or _parse_version(_probe(str(nvcc), "--version"))
    return Tool("nvcc", version, str(nvcc), "wheel nvidia-cuda-nvcc")


def _nvrtc_library() -> tuple[Path | None, str]:
    root = wheel_root()
    if root is not None and (root / "lib" / "libnvrtc.so.13").is_file():
        return root / "lib" / "libnvrtc.so.13", "wheel nvidia-cuda-nvrtc"
    found = ctypes.util.find_library("nvrtc")
    return (Path(found), "system") if found else (None, "")


@lru_cache(maxsize=4)
def _load_nvrtc(path: str) -> ctypes.CDLL:
    # NVRTC opens libnvrtc-builtins at compile time; load it first from the same
    # directory, since a wheel's lib directory is not on the loader's search path.
    for builtins in sorted(Path(path).parent.glob("libnvrtc-builtins.so.*")):
        if ".alt." not in builtins.name:
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            break
    return ctypes.CDLL(path)


def find_nvrtc() -> Tool | None:
    """NVRTC from the wheel (or the system); ``None`` if it cannot be loaded."""
    path, origin = _nvrtc_library()
    if path is None:
        return None
    try:
        lib = _load_nvrtc(str(path))
    except OSError:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    version = f"{major.value}.{minor.value}"
    dist = _dist_version("nvidia-cuda-nvrtc") if origin.startswith("wheel") else None
    if dist and dist.startswith(version):
        version = dist
    root = wheel_root()
    extra = {"include": str(root / "include")} if root and (root / "include").is_dir() else {}
    return Tool("nvrtc", version, str(path), origin, extra)


def find_ptxas() -> Tool | None:
    """ptxas on PATH, else the ``nvidia-cuda-nvcc`` wheel's."""
    path = shutil.which("ptxas")
    if path:
        return Tool("ptxas", _parse_version(_probe(path, "--version")), path, "PATH")
    root = wheel_root()
    ptxas = root / "bin" / "ptxas" if root else None
    if ptxas is None or not ptxas.is_file() or not os.access(ptxas, os.X_OK):
        return None
    version = _dist_version("nvidia-cuda-nvcc") or _parse_version(_probe(str(ptxas), "--version"))
    return Tool("ptxas", version, str(ptxas), "wheel nvidia-cuda-nvcc")


def require_ptxas() -> Tool:
    """:func:`find_ptxas`, raising :class:`ToolchainError` when there is none."""
    tool = find_ptxas()
    if tool is None:
        raise ToolchainError(NO_PTXAS)
    return tool


# --- OpenCL: clang + libclc ----------------------------------------------------------


def _libclc() -> tuple[Path, Path | None] | None:
    """libclc's NVPTX bitcode and, if not in a default place, its header directory."""
    env = os.environ.get("KERNCAST_LIBCLC")
    candidates = [Path(env).expanduser()] if env else list(LIBCLC_DIRS)
    for cand in candidates:
        bc = cand if cand.suffix == ".bc" else cand / LIBCLC_FILE
        if bc.is_file():
            for inc in (bc.parent.parent.parent / "include", bc.parent.parent / "include",
                        Path("/usr/include")):
                if (inc / "clc" / "clc.h").is_file():
                    return bc, (None if inc == Path("/usr/include") else inc)
    return None


def _clang_binary() -> tuple[str, str] | None:
    for name in ("clang-14", "clang"):
        path = shutil.which(name)
        if path is None:
            continue
        version = _parse_version(_probe(path, "--version"))
        major = re.match(r"(\d+)", version)
        if major and int(major.group(1)) >= 14:
            return path, version
    return None


def _nvptx_archs(path: str) -> str:
    """The sm_XY targets this clang's NVPTX back end knows, comma-separated."""
    text = _probe(path, "--print-supported-cpus", "-target", "nvptx64")
    numbers = sorted({int(n) for n in re.findall(r"\bsm_(\d+)\b", text)}) or [86]
    return ",".join(f"sm_{n}" for n in numbers)


@lru_cache(maxsize=8)
def _file_digest(path: str, size: int, mtime: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def find_clang() -> Tool | None:
    """clang (14 or newer) with libclc's NVPTX library; ``None`` if either is missing."""
    binary, clc = _clang_binary(), _libclc()
    if binary is None or clc is None:
        return None
    path, version = binary
    bc, include = clc
    st = bc.stat()
    extra = {"libclc": str(bc), "libclc_sha256": _file_digest(str(bc), st.st_size, st.st_mtime_ns),
             "nvptx_archs": _nvptx_archs(path)}
    if include is not None:
        extra["include"] = str(include)
    return Tool("clang", version, path, "PATH", extra)
