"""Tokenizer for PTX text: one pass with a master regular expression.

Tokens are plain tuples ``(kind, text, offset)`` for speed. Kinds:

``word``
    identifiers, registers and dotted instruction names (``ld.global.nc.v4.f32``,
    ``%tid.x``, ``$L__BB0_3``, ``shared::cta`` segments included);
``dot``
    directives and declaration keywords (``.reg``, ``.b32``, ``.shared::cta``);
``num``
    numeric literals (``42``, ``0xFFU``, ``0f3F800000``, ``1.5e3``);
``str``
    string literals (``"nounroll"``);
``p``
    punctuation, one or two characters;
``eof``
    the end of the text.
"""

from __future__ import annotations

import bisect
import re

from kerncast.ptx._errors import PTXSyntaxError

__all__ = ["Token", "Source", "tokenize"]

Token = tuple[str, str, int]

# The most frequent tokens come first; '/' is punctuation only when no comment starts.
_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<word>(?:[A-Za-z_][A-Za-z0-9_$]*|[$%][A-Za-z0-9_$]+)
             (?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_]+)*)*)
  | (?P<p>[,;:{}\[\]()+\-!@|=*%&^~?]|<<|>>|[<>])
  | (?P<num>(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?
             |[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+U?)
            (?![0-9A-Za-z_$.]))
  | (?P<dot>\.[A-Za-z_][A-Za-z0-9_$]*(?:::[A-Za-z0-9_]+)*)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<badc>/\*)
  | (?P<slash>/)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<bads>")
  | (?P<badnum>[0-9][0-9A-Za-z_$.]*)
  | (?P<bad>.)
    """,
    re.X | re.S,
)

_SKIP = frozenset(("ws", "lc", "bc"))
_BAD = {
    "badc": "unterminated comment '/*'",
    "bads": "unterminated string literal",
    "badnum": "malformed number {text!r}",
    "bad": "unexpected character {text!r}",
}


class Source:
    """The text being parsed: line lookup for offsets and error construction."""

    __slots__ = ("text", "filename", "_starts")

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.text = text
        self.filename = filename
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def line_text(self, line: int) -> str:
        if not 1 <= line <= len(self._starts):
            return ""
        start = self._starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def error(self, reason: str, offset: int) -> PTXSyntaxError:
        line, column = self.position(offset)
        return PTXSyntaxError(reason, line, column, self.line_text(line), self.filename)


def tokenize(source: Source) -> list[Token]:
    """All tokens of ``source`` (comments and white space dropped), then ``eof``.

    Raises
    ------
    PTXSyntaxError
        For a character that starts no token, an unterminated comment or string,
        or a malformed number.
    """
    tokens: list[Token] = []
    append = tokens.append
    for match in _TOKEN.finditer(source.text):
        kind = match.lastgroup
        if kind in _SKIP:
            continue
        text = match.group()
        if kind in _BAD:
            raise source.error(_BAD[kind].format(text=text), match.start())
        append(("p" if kind == "slash" else kind, text, match.start()))
    append(("eof", "", len(source.text.rstrip())))
    return tokens
