"""Profile a region of C/C++ code: XAPP's 39 features, on any machine with clang-14.

The program is compiled to LLVM IR (``clang-14 -O2``, no vectorisation, so that one IR
operation is one scalar operation), linked into one module, instrumented by the pass in
``native/xapp_pass.cpp`` and linked with the runtime ``native/xapp_rt.c``, which
computes the features while the program runs (see their headers for every
definition). A second build instruments only the region's entry and exit: it times
the region natively, which gives the profiler's slowdown.

The region is every call of one function (``region="name"``; keep it out of line with
``__attribute__((noinline))``) or, with ``region=None``, what runs between the markers
``kerncast_region_begin()`` and ``kerncast_region_end()`` (declared when the program is
compiled with ``-DKERNCAST_PROFILE``; the corpus's ``KC_ROI_BEGIN``/``KC_ROI_END`` call
them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kerncast._errors import InputError, KerncastError, ToolchainError
from kerncast.cpu._features import FEATURES

__all__ = ["CpuProfile", "Program", "build_program", "profile", "profile_program"]

NATIVE = Path(__file__).with_name("native")
#: Flags of every build: optimised, scalar (one IR operation per scalar operation).
OPT_FLAGS = ("-O2", "-fno-vectorize", "-fno-slp-vectorize")
_TOOLS = ("clang-14", "clang++-14", "opt-14", "llc-14", "llvm-link-14", "llvm-config-14")
_INSTALL = "apt-get install clang-14 llvm-14 llvm-14-dev g++"
#: The sampled features (ILP, strides, reuse, branch divergence) are computed on one
#: interval of 2^18 operations in every PERIOD (and on the region's first interval).
DEFAULT_PERIOD = 32
#: A region timed natively for less than this is timed three times (the median is kept).
_SHORT_S = 1.0


@dataclass(frozen=True)
class CpuProfile:
    """What the profiler measured of one region."""

    region: str
    features: dict[str, float]
    calls: int
    ops: int
    refs: int
    profiled_s: float
    native_s: float
    ilp_ops: int
    ilp_period: int
    truncated: bool = False
    flags: tuple[str, ...] = field(default=())

    @property
    def slowdown(self) -> float:
        """Profiled region time over its native time."""
        return self.profiled_s / self.native_s if self.native_s > 0 else float("nan")

    def row(self) -> dict[str, object]:
        """The features and the profile's facts, as one flat record."""
        return {**self.features, "region": self.region, "calls": self.calls, "ops": self.ops,
                "refs": self.refs, "ilp_ops": self.ilp_ops, "ilp_period": self.ilp_period,
                "truncated": self.truncated,
                "profiled_s": self.profiled_s, "native_s": self.native_s,
                "slowdown": self.slowdown, "cflags": " ".join(self.flags)}


@dataclass(frozen=True)
class Program:
    """An instrumented build and its native-timing twin."""

    profiled: Path
    timed: Path
    flags: tuple[str, ...]


def _cache_dir() -> Path:
    root = Path(os.environ.get("KERNCAST_CACHE", Path.home() / ".cache" / "kerncast"))
    path = root / "xapp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(f"{name} is missing: the CPU profiler needs LLVM 14 ({_INSTALL})")
    return path


def _run_tool(cmd: list[str], what: str, *, user: bool = False) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        message = f"{what} failed:\n{proc.stderr.strip()[-4000:]}"
        raise InputError(message) if user else KerncastError(message)


def _cached(name: str, sources: Sequence[Path], build: list[str]) -> Path:
    """Build ``name`` once per content of ``sources`` (atomically, so racing builds agree)."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)
                            + " ".join(build).encode()).hexdigest()[:16]
    out = _cache_dir() / f"{digest}-{name}"
    if out.exists():
        return out
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    _run_tool([*build, "-o", str(tmp)], f"building the profiler's {name}")
    tmp.replace(out)
    return out


def plugin() -> Path:
    """The instrumenting pass, as a plugin of LLVM 14's ``opt``."""
    source = NATIVE / "xapp_pass.cpp"
    cxxflags = subprocess.run([_tool("llvm-config-14"), "--cxxflags"], capture_output=True,
                              text=True).stdout.split()
    if not Path("/usr/lib/llvm-14/include/llvm/Passes/PassPlugin.h").exists() and not any(
            Path(f[2:], "llvm/Passes/PassPlugin.h").exists() for f in cxxflags if f.startswith("-I")):
        raise ToolchainError(f"LLVM 14's headers are missing: the CPU profiler needs them ({_INSTALL})")
    return _cached("xapp_pass.so", [source], [_tool("clang++-14"), "-shared", "-fPIC", "-O2",
                                              *cxxflags, str(source)])


def runtime() -> Path:
    """The runtime that computes the features, as an object file."""
    source = NATIVE / "xapp_rt.c"
    return _cached("xapp_rt.o", [source], [_tool("clang-14"), "-O2", "-c", str(source)])


def build_program(sources: Sequence[Path | str], workdir: Path, region: str | None, *,
                  flags: Sequence[str] = (), include_dirs: Sequence[Path | str] = (),
                  defines: Sequence[str] = ()) -> Program:
    """Compile ``sources`` (C or C++) into the instrumented program and the one that times
    ``region`` (a function's name, or None for the markers) natively.

    Raises
    ------
    InputError
        A source is missing or does not compile.
    ToolchainError
        LLVM 14 is not installed.
    """
    paths = [Path(s) for s in sources]
    if not paths:
        raise InputError("no source file to profile: give the C or C++ file(s) of the program")
    for path in paths:
        if not path.is_file():
            raise InputError(f"no such source file: {path}")
    pass_plugin, rt = plugin(), runtime()
    cflags = [*OPT_FLAGS, "-DKERNCAST_PROFILE", *flags, *(f"-I{d}" for d in include_dirs),
              *(f"-D{d}" for d in defines)]
    cpp = any(p.suffix in (".cc", ".cpp", ".cxx", ".C") for p in paths)
    bitcode = []
    for k, path in enumerate(paths):
        out = workdir / f"src{k}.bc"
        compiler = "clang++-14" if path.suffix in (".cc", ".cpp", ".cxx", ".C") else "clang-14"
        _run_tool([_tool(compiler), *cflags, "-emit-llvm", "-c", str(path), "-o", str(out)],
                  f"compiling {path.name}", user=True)
        bitcode.append(str(out))
    linked = workdir / "program.bc"
    _run_tool([_tool("llvm-link-14"), *bitcode, "-o", str(linked)], "linking the program's IR")
    programs = {}
    for kind, env in (("profiled", "0"), ("timed", "1")):
        instrumented, obj, exe = (workdir / f"{kind}.bc", workdir / f"{kind}.o", workdir / kind)
        proc = subprocess.run([_tool("opt-14"), f"-load-pass-plugin={pass_plugin}",
                               "-passes=kerncast-xapp", str(linked), "-o", str(instrumented)],
                              capture_output=True, text=True,
                              env={**os.environ, "KERNCAST_XAPP_TIMING": env,
                                   "KERNCAST_XAPP_TIMED_FUNCTION": region or ""})
        if proc.returncode != 0:
            raise KerncastError(f"instrumenting the program failed:\n{proc.stderr.strip()[-4000:]}")
        _run_tool([_tool("llc-14"), "-O2", "-relocation-model=pic", "-filetype=obj", str(instrumented),
                   "-o", str(obj)], "generating code")
        _run_tool([_tool("clang++-14" if cpp else "clang-14"), str(obj), str(rt), "-lm", "-o", str(exe)],
                  "linking the program", user=True)
        programs[kind] = exe
    return Program(programs["profiled"], programs["timed"], tuple(cflags))


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _execute(program: Path, args: Sequence[str], region: str | None, period: int, timeout: float,
             cwd: Path | None, max_ops: int = 0) -> dict:
    with tempfile.TemporaryDirectory(prefix="kerncast-xapp-") as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "KERNCAST_XAPP_REGION": region or "", "KERNCAST_XAPP_OUT": str(out),
               "KERNCAST_XAPP_PERIOD": str(period), "KERNCAST_XAPP_MAX_OPS": str(max_ops)}
        try:
            proc = subprocess.run([str(program), *args], capture_output=True, text=True, env=env,
                                  timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            raise InputError(f"the program did not finish within {timeout:g} s under the profiler; "
                             "give it a smaller input or a longer --timeout") from None
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip()[-2000:]
            raise InputError(f"the program {_describe_exit(proc.returncode)}"
                             + (f":\n{tail}" if tail else "") + "\nfix the program or its arguments")
        if not out.exists():
            raise InputError(_not_entered(region))
        return json.loads(out.read_text())


def _not_entered(region: str | None) -> str:
    if region:
        return (f"the region {region} was never entered: the program ran but never called "
                f"{region}; check the name and the program's arguments")
    return ("the region was never entered: the program never called kerncast_region_begin(); "
            "give --region FUNCTION or add the markers")


def profile_program(program: Program, region: str | None, args: Sequence[str] = (), *,
                    period: int = DEFAULT_PERIOD, timeout: float = 3600.0, cwd: Path | None = None,
                    max_ops: int = 0, native: bool = True) -> CpuProfile:
    """Run a built program natively timed (unless ``native`` is False), then profiled, and
    read the region's profile; ``max_ops`` stops the profiled run after about that many
    of the region's operations (the profile of a prefix: ``truncated``)."""
    if period < 1:
        raise InputError(f"the sampling period must be at least 1, not {period}")
    if max_ops < 0:
        raise InputError(f"the operation limit must be 0 (none) or more, not {max_ops}")
    native_s = _native_seconds(program, args, region, timeout, cwd) if native else float("nan")
    measured = _execute(program.profiled, args, region, period, timeout, cwd, max_ops)
    _check_region(measured, region)
    features = {name: float(measured["features"][name]) for name in FEATURES}
    return CpuProfile(region=region or "markers", features=features, calls=int(measured["calls"]),
                      ops=int(measured["ops"]), refs=int(measured["refs"]),
                      profiled_s=float(measured["region_seconds"]), native_s=native_s,
                      ilp_ops=int(measured["ilp_ops"]), ilp_period=int(measured["ilp_period"]),
                      truncated=bool(measured.get("truncated")), flags=program.flags)


def _native_seconds(program: Program, args: Sequence[str], region: str | None, timeout: float,
                    cwd: Path | None) -> float:
    """The region's native time: one run, or the median of three for a short region."""
    times = []
    for _ in range(3):
        result = _execute(program.timed, args, region, 1, timeout, cwd)
        _check_region(result, region)
        times.append(float(result["region_seconds"]))
        if times[0] >= _SHORT_S:
            break
    return float(sorted(times)[len(times) // 2])


def _check_region(result: dict, region: str | None) -> None:
    if region and not result.get("function_found"):
        raise InputError(f"the program has no function {region} once compiled: it does not exist or "
                         "was inlined everywhere; check the name or mark it __attribute__((noinline))")
    if int(result.get("calls", 0)) == 0:
        raise InputError(_not_entered(region))
    if "features" in result and int(result.get("ops", 0)) == 0:
        raise InputError(f"the region {region or ''} ran no operation: there is nothing to profile")


def profile(sources: Sequence[Path | str], region: str | None, args: Sequence[str] = (), *,
            flags: Sequence[str] = (), include_dirs: Sequence[Path | str] = (),
            defines: Sequence[str] = (), period: int = DEFAULT_PERIOD, timeout: float = 3600.0,
            cwd: Path | None = None, max_ops: int = 0) -> CpuProfile:
    """Compile, run and profile a program's region; nothing is left behind.

    Parameters
    ----------
    sources
        The program's C/C++ files.
    region
        The function whose calls are the region, or None for the markers.
    args
        The program's command-line arguments.
    period
        The sampled features are computed on one interval of 2^18 operations in every
        ``period`` (1: on every operation).
    max_ops
        Stop after about this many of the region's operations (0: run it whole).
    """
    with tempfile.TemporaryDirectory(prefix="kerncast-xapp-build-") as tmp:
        program = build_program(sources, Path(tmp), region, flags=flags, include_dirs=include_dirs,
                                defines=defines)
        return profile_program(program, region, args, period=period, timeout=timeout, cwd=cwd,
                               max_ops=max_ops)
