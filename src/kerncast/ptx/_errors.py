"""The error the PTX parser raises for every malformed input."""

from __future__ import annotations

from kerncast._errors import InputError

__all__ = ["PTXSyntaxError"]


class PTXSyntaxError(InputError):
    """PTX text that cannot be parsed, with the place and the text at fault.

    Attributes
    ----------
    line, column : int
        1-based position of the offending token (the end of the text for a
        truncated file).
    text : str
        The offending source line, stripped (cut to 120 characters).
    reason : str
        What is wrong, without the position.
    filename : str or None
        The file the text came from, where the caller said so.
    """

    def __init__(self, reason: str, line: int, column: int, text: str = "",
                 filename: str | None = None) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        self.text = text.strip()[:120]
        self.filename = filename
        where = f"{filename}: " if filename else ""
        shown = f" in {self.text!r}" if self.text else ""
        super().__init__(f"{where}PTX line {line}, column {column}: {reason}{shown}")
