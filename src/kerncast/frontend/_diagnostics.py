"""Compiler messages, made readable: ``file:line: error: ...`` with the user's file name."""

from __future__ import annotations

import re

from kerncast._errors import InputError

__all__ = ["compile_error", "error_lines"]

MAX_LINES = 20
# nvcc, cicc and NVRTC write "file(12): error: ..."; gcc and clang "file:12:5: error: ...".
_PAREN = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<rest>(?:catastrophic )?error.*)$")
_COLON = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<rest>(?:fatal )?error.*)$")
_OTHER = re.compile(r"\b(?:fatal|error)\b", re.IGNORECASE)


def _normalise(line: str) -> str | None:
    for pattern in (_PAREN, _COLON):
        match = pattern.match(line)
        if match:
            rest = re.sub(r"^(catastrophic |fatal )?error( #\d+-D)?:", r"\1error:", match["rest"])
            return f"{match['file']}:{match['line']}: {rest}"
    if _OTHER.search(line) and "errors detected" not in line and "error generated" not in line \
            and "errors generated" not in line:
        return line.strip()
    return None


def _replace(log: str, replacements: dict[str, str] | None) -> str:
    for old, new in sorted((replacements or {}).items(), key=lambda kv: -len(kv[0])):
        log = log.replace(old, new)
    return log


def error_lines(log: str, replacements: dict[str, str] | None = None) -> list[str]:
    """The error lines of a compiler log, as ``file:line: error: message``.

    ``replacements`` maps temporary paths to the names the user knows.
    """
    log = _replace(log, replacements)
    lines = [_normalise(line.rstrip()) for line in log.splitlines()]
    return [line for line in lines if line]


def compile_error(language: str, display: str, tool: str, log: str,
                  replacements: dict[str, str] | None = None) -> InputError:
    """An :class:`InputError` carrying the compiler's error lines."""
    lines = error_lines(log, replacements) or [
        line for line in _replace(log or "", replacements).strip().splitlines() if line.strip()
    ] or ["(the compiler printed no message)"]
    shown = lines[:MAX_LINES]
    if len(lines) > MAX_LINES:
        shown.append(f"... and {len(lines) - MAX_LINES} more")
    head = f"{language} compile of {display} failed with {tool}; fix these errors:"
    return InputError("\n".join([head, *shown]))
