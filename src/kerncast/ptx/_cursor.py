"""Token cursor shared by the module and body parsers: lookahead, literals, constants."""

from __future__ import annotations

import math
import struct
from typing import NoReturn

from kerncast.ptx._errors import PTXSyntaxError
from kerncast.ptx._ir import Imm, SymbolRef
from kerncast.ptx._lexer import Source, Token

__all__ = ["Cursor"]

_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
_BINARY = {"*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "&": 6, "^": 5}


def _describe(token: Token) -> str:
    kind, text, _ = token
    return "the end of the file" if kind == "eof" else repr(text)


class Cursor:
    """A position in the token list with the helpers every parser needs."""

    def __init__(self, source: Source, tokens: list[Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.i = 0

    # -- lookahead -------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        index = self.i + ahead
        return self.tokens[index] if index < len(self.tokens) else self.tokens[-1]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        if token[0] != "eof":
            self.i += 1
        return token

    def at(self, text: str) -> bool:
        """Whether the next token is the punctuation or directive ``text``."""
        kind, value, _ = self.tokens[self.i]
        return value == text and kind in ("p", "dot")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            self.fail(f"expected {what or repr(text)}, found {_describe(self.peek())}")
        return self.advance()

    def expect_kind(self, kind: str, what: str) -> Token:
        token = self.peek()
        if token[0] != kind:
            self.fail(f"expected {what}, found {_describe(token)}")
        return self.advance()

    def line_of(self, token: Token) -> int:
        return self.source.position(token[2])[0]

    def fail(self, reason: str, token: Token | None = None) -> NoReturn:
        raise self.source.error(reason, (token or self.peek())[2])

    def error(self, reason: str, token: Token) -> PTXSyntaxError:
        return self.source.error(reason, token[2])

    # -- constants -------------------------------------------------------------------

    def integer(self, what: str = "an integer") -> int:
        """A non-negative decimal/hex/octal/binary integer literal."""
        token = self.peek()
        if token[0] != "num":
            self.fail(f"expected {what}, found {_describe(token)}")
        imm = self.literal(self.advance())
        if imm.is_float:
            self.fail(f"expected {what}, found {token[1]!r}", token)
        return int(imm.value)

    def literal(self, token: Token) -> Imm:
        """The :class:`Imm` of one ``num`` token."""
        text = token[1]
        head = text[:2].lower()
        if head == "0f":
            bits = int(text[2:], 16)
            return Imm(struct.unpack("<f", struct.pack("<I", bits))[0], "f32", bits, text)
        if head == "0d":
            bits = int(text[2:], 16)
            return Imm(struct.unpack("<d", struct.pack("<Q", bits))[0], "f64", bits, text)
        if "." in text or (head not in ("0x", "0b") and ("e" in text or "E" in text)):
            value = float(text)
            if math.isinf(value):
                self.fail(f"floating-point constant {text!r} is out of range", token)
            return Imm(value, "f64", struct.unpack("<Q", struct.pack("<d", value))[0], text)
        return self._int_literal(text, token)

    def _int_literal(self, text: str, token: Token) -> Imm:
        kind = "u64" if text.endswith("U") else "s64"
        digits = text.rstrip("U")
        head = digits[:2].lower()
        if head == "0x":
            value = int(digits[2:], 16)
        elif head == "0b":
            value = int(digits[2:], 2)
        elif len(digits) > 1 and digits[0] == "0":
            if any(c in "89" for c in digits):
                self.fail(f"malformed octal constant {text!r}", token)
            value = int(digits[1:], 8)
        else:
            value = int(digits)
        self.check_range(value, token)
        return Imm(value, kind, None, text)

    def check_range(self, value: int, token: Token) -> None:
        if not _INT_MIN <= value <= _INT_MAX:
            self.fail("integer constant out of the 64-bit range", token)

    def const_expr(self) -> Imm:
        """A constant: a literal, or an integer expression (``-4``, ``(2*8)+1``)."""
        start = self.peek()
        imm = self._binary(0)
        if imm.text or imm.is_float:
            return imm
        self.check_range(int(imm.value), start)
        return Imm(imm.value, imm.kind, None, "")

    def _binary(self, min_prec: int) -> Imm:
        left = self._unary()
        while True:
            token = self.peek()
            prec = _BINARY.get(token[1]) if token[0] == "p" else None
            if prec is None or prec < min_prec:
                return left
            self.advance()
            right = self._binary(prec + 1)
            left = self._apply(token, left, right)

    def _apply(self, token: Token, left: Imm, right: Imm) -> Imm:
        if left.is_float or right.is_float:
            self.fail(f"operator {token[1]!r} needs integer operands", token)
        a, b, op = int(left.value), int(right.value), token[1]
        if op in ("/", "%") and b == 0:
            self.fail("division by zero in a constant expression", token)
        if op in ("<<", ">>") and not 0 <= b < 64:
            self.fail("shift count out of range in a constant expression", token)
        value = {"*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a - b * int(a / b),
                 "+": lambda: a + b, "-": lambda: a - b, "<<": lambda: a << b,
                 ">>": lambda: a >> b, "&": lambda: a & b, "^": lambda: a ^ b}[op]()
        self.check_range(value, token)
        kind = "u64" if "u64" in (left.kind, right.kind) else "s64"
        return Imm(value, kind, None, "")

    def _unary(self) -> Imm:
        token = self.advance()
        kind, text, _ = token
        if kind == "num":
            return self.literal(token)
        if text == "(" and kind == "p":
            inner = self._binary(0)
            self.expect(")")
            return Imm(inner.value, inner.kind, inner.bits, "")
        if text in ("-", "~", "!") and kind == "p":
            return self._negate(text, self._unary(), token)
        self.fail(f"expected a constant, found {_describe(token)}", token)

    def _negate(self, op: str, imm: Imm, token: Token) -> Imm:
        if imm.is_float:
            if op != "-":
                self.fail(f"operator {op!r} needs an integer operand", token)
            sign = 1 << (31 if imm.kind == "f32" else 63)
            bits = imm.bits ^ sign
            if imm.text[:2].lower() in ("0f", "0d"):
                text = ("0f%08X" if imm.kind == "f32" else "0d%016X") % bits
            else:
                text = imm.text[1:] if imm.text.startswith("-") else "-" + imm.text
            return Imm(-imm.value, imm.kind, bits, text if imm.text else "")
        value = int(imm.value)
        result = -value if op == "-" else (~value if op == "~" else int(not value))
        text = "-" + imm.text if op == "-" and imm.text and not imm.text.startswith("-") else ""
        return Imm(result, imm.kind, None, text)

    def symbol_ref(self) -> SymbolRef:
        """An address constant: ``sym``, ``sym+8``, ``generic(sym)``, ``generic(sym)+8``."""
        token = self.expect_kind("word", "a symbol")
        name, generic = token[1], False
        if name == "generic" and self.at("("):
            self.advance()
            name, generic = self.expect_kind("word", "a symbol")[1], True
            self.expect(")")
        offset = 0
        if self.at("+") or self.at("-"):
            sign = -1 if self.advance()[1] == "-" else 1
            offset = sign * int(self.const_expr().value)
        return SymbolRef(name, offset, generic)
