"""Declarations shared by module and function scope: types, variables, parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

from kerncast.ptx._cursor import Cursor
from kerncast.ptx._ir import CallPrototype, Initializer, Param
from kerncast.ptx._isa import TYPES, VECTOR_WIDTHS
from kerncast.ptx._lexer import Token

__all__ = ["DeclParser", "Prelude"]

_PTR_SPACES = frozenset(("global", "shared", "const", "local"))
_MAX_DIM = 1 << 40


@dataclass
class Prelude:
    """The dotted words before a declared name: ``.align 4 .v2 .f32``."""

    type: str = ""
    vector: int = 1
    align: int | None = None
    ptr: bool = False
    ptr_space: str | None = None
    ptr_align: int | None = None
    attributes: list[str] = field(default_factory=list)


class DeclParser(Cursor):
    """Parsing of declaration pieces; subclassed by the body and module parsers."""

    def prelude(self, allow_ptr: bool = False) -> Prelude:
        """``.align N``, ``.vN``, the type, ``.ptr`` attributes and ``.attribute(...)``."""
        out = Prelude()
        while self.peek()[0] == "dot":
            token = self.peek()
            word = token[1][1:]
            if word == "align":
                self.advance()
                value = self._alignment()
                if out.ptr:
                    out.ptr_align = value
                else:
                    out.align = value
            elif word in VECTOR_WIDTHS:
                self.advance()
                out.vector = VECTOR_WIDTHS[word]
            elif word in TYPES:
                if out.type:
                    self.fail(f"a declaration has one type, found a second one {token[1]!r}")
                self.advance()
                out.type = word
            elif word == "ptr" and allow_ptr:
                self.advance()
                out.ptr = True
            elif out.ptr and word in _PTR_SPACES and out.ptr_space is None:
                self.advance()
                out.ptr_space = word
            elif word == "attribute":
                self.advance()
                out.attributes.append(self._attribute())
            else:
                break
        if not out.type:
            self.fail(f"expected a type such as .b32 or .f32, found {self._shown()}")
        return out

    def _shown(self) -> str:
        kind, text, _ = self.peek()
        return "the end of the file" if kind == "eof" else repr(text)

    def _alignment(self) -> int:
        token = self.peek()
        value = self.integer("an alignment")
        if value <= 0 or value & (value - 1):
            self.fail(f"alignment {value} is not a power of two", token)
        return value

    def _attribute(self) -> str:
        """The text of ``.attribute( ... )`` with balanced parentheses."""
        self.expect("(")
        parts, depth = [], 1
        while True:
            token = self.advance()
            if token[0] == "eof":
                self.fail("unterminated .attribute(...)", token)
            if token[1] == "(" and token[0] == "p":
                depth += 1
            elif token[1] == ")" and token[0] == "p":
                depth -= 1
                if depth == 0:
                    return "".join(parts)
            parts.append(token[1] if token[1] != "," else ", ")

    def dims(self) -> tuple[int | None, ...]:
        """Array dimensions ``[4][8]``; ``[]`` gives None."""
        dims: list[int | None] = []
        while self.at("["):
            self.advance()
            if self.accept("]"):
                dims.append(None)
                continue
            token = self.peek()
            value = self.integer("an array size")
            if not 0 <= value <= _MAX_DIM:
                self.fail(f"array size {value} is out of range", token)
            dims.append(value)
            self.expect("]")
        return tuple(dims)

    def initializer(self) -> Initializer:
        """``= {1, 2, 3}``, ``= 0f3F800000``, ``= generic(sym)+4`` and nested braces."""
        if self.accept("{"):
            items = [self.initializer()]
            while self.accept(","):
                items.append(self.initializer())
            self.expect("}", "',' or '}' in the initializer")
            return tuple(items)
        if self.peek()[0] == "word":
            return self.symbol_ref()
        return self.const_expr()

    def name_token(self, what: str, allow_sink: bool = False) -> Token:
        """A plain identifier (no dots) being declared."""
        token = self.expect_kind("word", what)
        if "." in token[1] or (token[1] == "_" and not allow_sink):
            self.fail(f"{token[1]!r} cannot be declared as {what}", token)
        return token

    def param(self, allow_reg: bool, allow_sink: bool = False) -> tuple[Param, Token]:
        """One parameter: ``.param .align 8 .b8 p[16]``, ``.param .u64 .ptr .global p``."""
        token = self.peek()
        space = token[1][1:] if token[0] == "dot" else ""
        if space not in (("param", "reg") if allow_reg else ("param",)):
            self.fail(f"expected a parameter (.param{' or .reg' if allow_reg else ''}), "
                      f"found {self._shown()}")
        self.advance()
        pre = self.prelude(allow_ptr=space == "param")
        name = self.name_token("a parameter", allow_sink)
        dims = self.dims()
        if any(d is None for d in dims):
            self.fail("a parameter array needs a size", name)
        return Param(name[1], pre.type, space, pre.vector, dims, pre.align, pre.ptr,
                     pre.ptr_space, pre.ptr_align), name

    def param_list(self, allow_reg: bool, allow_sink: bool = False) -> list[tuple[Param, Token]]:
        """``( param, param, ... )``, possibly empty."""
        self.expect("(")
        params: list[tuple[Param, Token]] = []
        if self.accept(")"):
            return params
        while True:
            params.append(self.param(allow_reg, allow_sink))
            if self.accept(")"):
                return params
            self.expect(",", "',' or ')' in the parameter list")

    def call_prototype(self, name: str) -> CallPrototype:
        """The rest of ``name: .callprototype (.param .b32 _) _ (.param .b64 _);``."""
        returns: list[tuple[Param, Token]] = []
        if self.at("("):
            returns = self.param_list(True, allow_sink=True)
        token = self.expect_kind("word", "'_' in the call prototype")
        if token[1] != "_":
            self.fail(f"expected '_' in the call prototype, found {token[1]!r}", token)
        params = self.param_list(True, allow_sink=True) if self.at("(") else []
        noreturn = self.accept(".noreturn")
        self.expect(";")
        return CallPrototype(name, tuple(p for p, _ in returns), tuple(p for p, _ in params),
                             noreturn)
