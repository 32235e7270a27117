"""Recursive-descent parser of PTX modules: ``parse(text) -> Module``."""

from __future__ import annotations

import re
import struct

from kerncast.ptx._body import BodyParser
from kerncast.ptx._errors import PTXSyntaxError
from kerncast.ptx._ir import (
    Alias, Function, Module, ModuleItem, Param, Pragma, Section, SymbolRef, Variable,
)
from kerncast.ptx._lexer import Source, Token, tokenize

__all__ = ["parse"]

_LINKAGE = frozenset(("visible", "extern", "weak", "common"))
_MODULE_SPACES = frozenset(("global", "const", "shared", "local"))
_DIM3 = frozenset(("maxntid", "reqntid", "reqnctapercluster"))
_SCALAR = frozenset(("minnctapersm", "maxnctapersm", "maxnreg", "maxclusterrank",
                     "abi_preserve", "abi_preserve_control"))
_FLAG_DIRECTIVES = frozenset(("noreturn", "explicitcluster", "blocksareclusters"))
_VERSION = re.compile(r"[0-9]+\.[0-9]+\Z")


class _ModuleParser(BodyParser):
    def __init__(self, source: Source, tokens: list[Token]) -> None:
        super().__init__(source, tokens)
        self.module_refs = []
        self._decoded = {}
        self.items: list[ModuleItem] = []
        self.symbols: dict[str, str] = {}
        self.defined: set[str] = set()
        self.files: dict[int, str] = {}
        self.version = ""
        self.targets: tuple[str, ...] = ()
        self.address_size = 32

    def module(self) -> Module:
        self._header()
        while self.peek()[0] != "eof":
            self._module_statement()
        for name, token in self.module_refs:
            if name not in self.symbols:
                self.fail(f"undefined symbol {name!r}", token)
        return Module(self.version, self.targets, self.address_size, tuple(self.items),
                      self.files, self.source.filename, self.source.text)

    # -- header ----------------------------------------------------------------------

    def _header(self) -> None:
        token = self.peek()
        if token[1] != ".version":
            self.fail("a PTX module starts with '.version', found "
                      f"{'the end of the file' if token[0] == 'eof' else repr(token[1])}")
        self.advance()
        version = self.expect_kind("num", "a version number such as 8.0")
        if not _VERSION.match(version[1]):
            self.fail(f"malformed version {version[1]!r}", version)
        self.version = version[1]
        while self.at(".file") or self.at(".target") or self.at(".address_size"):
            word = self.advance()[1]
            if word == ".file":
                self._file()
            elif word == ".target":
                self._target()
            else:
                size = self.peek()
                self.address_size = self.integer("an address size")
                if self.address_size not in (32, 64):
                    self.fail("the address size is 32 or 64", size)
        if not self.targets:
            self.fail("expected '.target' after '.version'")

    def _target(self) -> None:
        if self.targets:
            self.fail("a module has one '.target' directive")
        names = [self.expect_kind("word", "a target such as sm_90")[1]]
        while self.accept(","):
            names.append(self.expect_kind("word", "a target")[1])
        self.targets = tuple(names)

    def _file(self) -> None:
        """``.file N "name" [, timestamp, size]`` (no semicolon)."""
        first = self.peek()
        index = self.integer("a file number")
        name = self.expect_kind("str", "a file name")[1]
        line = self.line_of(first)
        while self.peek()[0] != "eof" and self.line_of(self.peek()) == line:
            kind, text, _ = self.peek()
            if kind != "num" and not (kind == "p" and text == ","):
                self.fail(f"unexpected {text!r} in a .file directive")
            self.advance()
        self.files[index] = name[1:-1]

    # -- statements ------------------------------------------------------------------

    def _module_statement(self) -> None:
        token = self.peek()
        if token[0] != "dot":
            what = repr(token[1])
            self.fail(f"expected a directive such as .entry or .global at module level, "
                      f"found {what}")
        word = token[1][1:]
        self.advance()
        linkage = None
        if word in _LINKAGE:
            linkage = word
            follow = self.peek()
            word = follow[1][1:] if follow[0] == "dot" else ""
            if word not in ("entry", "func") and word not in _MODULE_SPACES:
                self.fail(f"expected .entry, .func or a variable after '.{linkage}'")
            self.advance()
        if word in ("entry", "func"):
            self._function(linkage, word == "entry", token)
        elif word in _MODULE_SPACES:
            self._variables(word, linkage)
        elif linkage is None:
            self._directive(word, token)

    def _directive(self, word: str, token: Token) -> None:
        if word == "file":
            self._file()
        elif word == "section":
            self._section()
        elif word == "pragma":
            text = self.expect_kind("str", "a pragma string")[1]
            self.expect(";")
            self.items.append(Pragma(text[1:-1]))
        elif word == "alias":
            self._alias()
        elif word in ("version", "target", "address_size"):
            self.fail(f"'.{word}' belongs at the start of the module", token)
        else:
            self.fail(f"unknown directive {token[1]!r} at module level", token)

    def _section(self) -> None:
        """A debug section, kept as raw text: ``.section .debug_info { ... }``."""
        name = self.expect_kind("dot", "a section name")[1]
        opening = self.expect("{")
        depth = 1
        while depth:
            token = self.advance()
            if token[0] == "eof":
                self.fail("unexpected end of the file inside a .section block", token)
            if token[0] == "p" and token[1] in "{}":
                depth += 1 if token[1] == "{" else -1
        self.items.append(Section(name, self.source.text[opening[2] + 1:token[2]]))

    def _alias(self) -> None:
        alias = self.name_token("an alias name")
        self.expect(",")
        target = self.name_token("an aliased function")
        self.expect(";")
        if self.symbols.get(target[1]) != "func":
            self.fail(f"'.alias' needs a declared function, {target[1]!r} is not one", target)
        self._add_symbol(alias, "func")
        self.items.append(Alias(alias[1], target[1]))

    def _add_symbol(self, token: Token, kind: str, definition: bool = True) -> None:
        name = token[1]
        if self.symbols.get(name, kind) != kind:
            self.fail(f"{name!r} is declared both as a variable and as a function", token)
        if definition and name in self.defined:
            self.fail(f"{name!r} is defined twice", token)
        self.symbols[name] = kind
        if definition:
            self.defined.add(name)

    def _variables(self, space: str, linkage: str | None) -> None:
        pre = self.prelude()
        while True:
            token = self.name_token("a variable")
            dims = self.dims()
            init = self.initializer() if self.accept("=") else None
            self._add_symbol(token, "var", definition=linkage != "extern")
            self._initializer_refs(init, token)
            self.items.append(Variable(token[1], space, pre.type, pre.vector, dims, pre.align,
                                       linkage, init, tuple(pre.attributes),
                                       self.line_of(token)))
            if not self.accept(","):
                break
        self.expect(";", "';' after the declaration")

    def _initializer_refs(self, init: object, token: Token) -> None:
        """Addresses in an initializer must name module-level symbols (checked at the end)."""
        if isinstance(init, tuple):
            for item in init:
                self._initializer_refs(item, token)
        elif isinstance(init, SymbolRef):
            self.module_refs.append((init.name, token))

    # -- functions -------------------------------------------------------------------

    def _function(self, linkage: str | None, is_entry: bool, start: Token) -> None:
        returns: list[tuple[Param, Token]] = []
        if not is_entry and self.at("("):
            returns = self.param_list(allow_reg=True)
        name = self.name_token("a function name")
        params = self.param_list(allow_reg=not is_entry) if self.at("(") else []
        info = self._performance_directives(is_entry)
        has_body = self.at("{")
        self._add_symbol(name, "func", definition=has_body)
        fields = dict(name=name[1], is_entry=is_entry, params=tuple(p for p, _ in params),
                      returns=tuple(p for p, _ in returns), linkage=linkage,
                      line=self.line_of(start), **info)
        if not has_body:
            self.expect(";", "'{' or ';' after the function header")
            self.items.append(Function(**fields))
            return
        body = self.function_body([*returns, *params], name[1])
        self.items.append(Function(
            **fields, registers=body.registers, variables=tuple(body.variables),
            instructions=body.instructions, labels=body.labels, branch_tables=body.tables,
            prototypes=body.prototypes, body=body.body))

    def _performance_directives(self, is_entry: bool) -> dict:
        info: dict = {"pragmas": [], "directives": []}
        while self.peek()[0] == "dot":
            token = self.advance()
            word = token[1][1:]
            if word == "pragma":
                info["pragmas"].append(self.expect_kind("str", "a pragma string")[1][1:-1])
                self.expect(";")
                continue
            if word in _DIM3:
                values = [self._positive()]
                while self.accept(",") and len(values) < 3:
                    values.append(self._positive())
                info[word] = tuple(values)
            elif word in _SCALAR:
                values = [self._positive()]
                info[word] = values[0]
            elif word in _FLAG_DIRECTIVES:
                values = []
                info["noreturn"] = info.get("noreturn", False) or word == "noreturn"
            else:
                self.fail(f"unknown directive {token[1]!r} in a function header", token)
            info["directives"].append((word, tuple(values)))
        known = {"maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg", "noreturn"}
        out = {k: v for k, v in info.items() if k in known}
        out["pragmas"] = tuple(info["pragmas"])
        out["directives"] = tuple(info["directives"])
        return out

    def _positive(self) -> int:
        token = self.peek()
        value = self.integer("a positive integer")
        if value <= 0 or value > 1 << 31:
            self.fail(f"{value} is out of range for a performance directive", token)
        return value


def parse(text: str, *, filename: str | None = None) -> Module:
    """Parse PTX assembly into a :class:`Module`.

    Parameters
    ----------
    text : str
        The PTX source (what ``nvcc -ptx`` or clang's NVPTX back end writes).
    filename : str, optional
        Shown in error messages and kept in ``Module.filename``.

    Returns
    -------
    Module
        Typed, frozen IR: functions with decoded instructions, resolved branch
        targets and declarations.

    Raises
    ------
    PTXSyntaxError
        For any malformed input, with ``line``, ``column`` and the offending text.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() needs the PTX text as str, got {type(text).__name__}")
    source = Source(text, filename)
    tokens = tokenize(source)
    parser = _ModuleParser(source, tokens)
    try:
        return parser.module()
    except PTXSyntaxError:
        raise
    except RecursionError:
        raise parser.error("the text is nested too deeply", parser.peek()) from None
    except (IndexError, KeyError, ValueError, TypeError, AttributeError, OverflowError,
            struct.error) as exc:  # a parser bug must still surface as a PTX error
        raise parser.error(f"internal parser error ({type(exc).__name__}: {exc}); "
                           "please report this input", parser.peek()) from exc
