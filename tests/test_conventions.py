"""Code conventions checked by reading the source.

An import inside a function (``# noqa: PLC0415``) says why in parentheses:
``# noqa: PLC0415 (on use: scikit-learn)``, ``(cycle: ...)``, ``(CLI start-up: ...)``.
The reasons allowed are an optional or heavy dependency loaded on use, a real import
cycle, or keeping the command line's start-up light; anything else goes to the top.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kerncast"

#: ``noqa`` naming PLC0415, then the reason in parentheses.
NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z0-9, ]*PLC0415[A-Z0-9, ]*)(?P<rest>.*)$")
REASON = re.compile(r"^\s*\(\S[^)]*\)")

#: Imports without a reason left from before the rule, by file: a count may go down
#: (give the imports their reasons, then lower it or drop the entry), never up.
UNREASONED: dict[str, int] = {}


def _unreasoned() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = NOQA.search(line)
            if match and not REASON.match(match["rest"]):
                found.setdefault(path.relative_to(SRC).as_posix(), []).append(number)
    return found


def test_every_import_inside_a_function_says_why():
    over = {f"{name}:{lines}": len(lines) for name, lines in _unreasoned().items()
            if len(lines) > UNREASONED.get(name, 0)}
    assert not over, ("give these '# noqa: PLC0415' their reason in parentheses, e.g. "
                      f"'# noqa: PLC0415 (on use: scikit-learn)': {over}")


def test_the_reason_pattern():
    def ok(line: str) -> bool:
        match = NOQA.search(line)
        return bool(match) and bool(REASON.match(match["rest"]))

    assert ok("    import cupy as cp  # noqa: PLC0415 (on use: CuPy)")
    assert ok("    from kerncast.data import Dataset  # noqa: PLC0415  (pandas: not on every command)")
    assert not ok("    from kerncast.sim import FIXES  # noqa: PLC0415")
    assert not ok("    from kerncast.sim import FIXES  # noqa: PLC0415 ()")
    assert not ok("    from kerncast.sim import FIXES  # noqa: PLC0415 the simulator")
