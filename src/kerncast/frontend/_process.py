"""Running the external compilers (nvcc, ptxas, clang): the one place that spawns them."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from kerncast._errors import ToolchainError

__all__ = ["run_tool"]

TIMEOUT_S = 300


def run_tool(argv: Sequence[str], *, cwd: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run one compiler command and return it finished, with text output captured.

    A non-zero exit status is returned, not raised: the caller turns the compiler's
    messages into the right error. A tool that cannot be started or hangs raises
    :class:`ToolchainError`.
    """
    argv = [str(a) for a in argv]
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              errors="replace", timeout=TIMEOUT_S, check=False)
    except OSError as exc:
        raise ToolchainError(f"cannot run {argv[0]} ({exc}); check that the toolchain "
                             f"is installed and executable") from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{argv[0]} ran for more than {TIMEOUT_S} s and was stopped; "
                             f"simplify the source or raise the timeout") from None
