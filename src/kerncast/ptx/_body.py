"""Parser of function bodies: scopes, declarations, labels, instructions and operands."""

from __future__ import annotations

from kerncast.ptx._classes import classify
from kerncast.ptx._decls import DeclParser
from kerncast.ptx._ir import (
    Address, BodyItem, CallPrototype, Imm, Instruction, Label, LabelDef, Operand, Param, ParamList,
    Pragma, Reg, RegDecl, RegisterDecl, RegPair, ScopeEnd, ScopeStart, Sink, SourceLoc,
    SpecialReg, Symbol, TargetList, TexOperand, Variable, Vector,
)
from kerncast.ptx._isa import (
    OPCODES, SPECIAL_REGISTERS, decode_modifiers, is_known_modifier, is_special_register,
)
from kerncast.ptx._lexer import Token
from kerncast.ptx._validate import check_operands

__all__ = ["BodyParser", "FunctionBody"]

_BODY_SPACES = frozenset(("local", "shared", "param", "const", "global"))
_COMPONENTS = frozenset("xyzwrgba")
_MAX_REGS = 1 << 20


class _Scope:
    """One ``{ }`` level: declared names, labels and label uses still unresolved."""

    __slots__ = ("names", "labels", "pending")

    def __init__(self) -> None:
        self.names: dict[str, tuple[str, str, int]] = {}  # source -> (unique, kind, vector)
        self.labels: dict[str, tuple[str, str]] = {}  # source -> (unique, kind)
        self.pending: list[tuple[str, tuple[str, ...], Token, tuple]] = []


class _Draft:
    """An instruction before its labels are resolved."""

    __slots__ = ("opcode", "mods", "operands", "guard", "token", "loc")

    def __init__(self, opcode: str, mods: tuple[str, ...], operands: list[Operand],
                 guard: Reg | None, token: Token, loc: SourceLoc | None) -> None:
        self.opcode, self.mods, self.operands = opcode, mods, operands
        self.guard, self.token, self.loc = guard, token, loc


class FunctionBody:
    """Everything a parsed body contributes to a :class:`Function`."""

    __slots__ = ("registers", "variables", "instructions", "labels", "tables", "prototypes",
                 "body")

    def __init__(self, registers: dict[str, RegDecl], variables: list[Variable],
                 instructions: tuple[Instruction, ...], labels: dict[str, int],
                 tables: dict[str, TargetList], prototypes: dict[str, CallPrototype],
                 body: tuple[BodyItem, ...]) -> None:
        self.registers, self.variables, self.instructions = registers, variables, instructions
        self.labels, self.tables, self.prototypes, self.body = labels, tables, prototypes, body


class _State:
    """Mutable state while one function body is parsed."""

    def __init__(self) -> None:
        self.scopes: list[_Scope] = [_Scope()]
        self.declared: dict[str, tuple] = {}
        self.open_names: dict[str, int] = {}
        self.registers: dict[str, RegDecl] = {}
        self.variables: list[Variable] = []
        self.drafts: list[_Draft] = []
        self.body: list[BodyItem | int | tuple[str, int]] = []
        self.label_index: dict[str, int] = {}
        self.tables: list[TargetList] = []
        self.prototypes: dict[str, CallPrototype] = {}
        self.renames: dict[tuple, dict[str, str]] = {}
        self.loc: SourceLoc | None = None


class BodyParser(DeclParser):
    """Function bodies; the module parser builds on it."""

    module_refs: list[tuple[str, Token]]
    _decoded: dict[tuple[str, tuple[str, ...]], dict]
    _state: _State

    # -- names and scopes ------------------------------------------------------------

    def _fresh(self, name: str) -> str:
        state, k = self._state, 1
        while f"{name}${k}" in state.declared or f"{name}${k}" in state.label_index:
            k += 1
        return f"{name}${k}"

    def declare(self, token: Token, kind: str, signature: tuple, vector: int = 1) -> str:
        """Enter a register or variable in the current scope; returns its unique name."""
        state, name = self._state, token[1]
        scope = state.scopes[-1]
        if name in scope.names:
            self.fail(f"{name} is declared twice in the same scope", token)
        unique = name
        visible = any(name in s.names for s in state.scopes)
        previous = state.declared.get(name)
        if visible or state.open_names.get(name) or (previous and previous != signature):
            unique = self._fresh(name)
        state.declared[unique] = signature
        state.open_names[unique] = state.open_names.get(unique, 0) + 1
        scope.names[name] = (unique, kind, vector)
        return unique

    def lookup(self, name: str) -> tuple[str, str, int] | None:
        for scope in reversed(self._state.scopes):
            hit = scope.names.get(name)
            if hit is not None:
                return hit
        return None

    def open_scope(self) -> None:
        self._state.scopes.append(_Scope())

    def close_scope(self) -> None:
        """Resolve the scope's label uses; pass the others to the enclosing scope."""
        state = self._state
        scope = state.scopes.pop()
        for unique, _, _ in scope.names.values():
            state.open_names[unique] -= 1
        outer = state.scopes[-1] if state.scopes else None
        for name, kinds, token, owner in scope.pending:
            hit = scope.labels.get(name)
            if hit is None:
                if outer is None:
                    self.fail(f"undefined label {name!r}", token)
                outer.pending.append((name, kinds, token, owner))
                continue
            if hit[1] not in kinds:
                wanted = " or ".join(kinds)
                self.fail(f"{name!r} is a {hit[1]} label where a {wanted} label is needed",
                          token)
            if hit[0] != name:
                state.renames.setdefault(owner, {})[name] = hit[0]

    def define_label(self, token: Token, kind: str) -> str:
        state, name = self._state, token[1]
        scope = state.scopes[-1]
        if name in scope.labels:
            self.fail(f"label {name!r} is defined twice", token)
        unique = name
        if name in state.label_index or name in (t.name for t in state.tables) \
                or name in state.prototypes:
            unique = self._fresh(name)
        scope.labels[name] = (unique, kind)
        return unique

    def label_use(self, token: Token, kinds: tuple[str, ...], owner: tuple) -> Label:
        self._state.scopes[-1].pending.append((token[1], kinds, token, owner))
        return Label(token[1])

    # -- the body --------------------------------------------------------------------

    def function_body(self, params: list[tuple[Param, Token]], fname: str) -> FunctionBody:
        """Parse ``{ ... }`` after a function header with these parameters."""
        self._state = state = _State()
        for param, token in params:
            if param.space == "reg":
                unique = self.declare(token, "reg", ("param", param.name), param.vector)
                state.registers[unique] = RegDecl(unique, param.type, param.vector)
            else:
                unique = self.declare(token, "var", ("param", param.name))
            if unique != param.name:
                self.fail(f"parameter {param.name} is declared twice", token)
        opening = self.expect("{")
        self.open_scope()
        while True:
            token = self.peek()
            if token[0] == "eof":
                self.fail(f"unexpected end of the file: function {fname} opened on line "
                          f"{self.line_of(opening)} is missing its closing '}}'")
            if token[0] == "p" and token[1] == "}":
                self.advance()
                self.close_scope()
                if len(state.scopes) == 1:
                    break
                state.body.append(ScopeEnd())
            elif token[0] == "p" and token[1] == "{":
                self.advance()
                self.open_scope()
                state.body.append(ScopeStart())
            else:
                self.statement()
        self.close_scope()
        return self._finish()

    def statement(self) -> None:
        kind, text, _ = token = self.peek()
        if kind == "dot":
            self.body_directive(token)
        elif kind == "word" and self.peek(1)[1] == ":" and self.peek(1)[0] == "p":
            self.label_statement()
        elif kind == "word" or (kind == "p" and text == "@"):
            self.instruction()
        else:
            self.fail(f"unexpected {text!r} in a function body" if kind != "eof" else
                      "unexpected end of the file in a function body")

    def body_directive(self, token: Token) -> None:
        word = token[1][1:]
        self.advance()
        if word == "reg":
            self.reg_decl()
        elif word in _BODY_SPACES:
            self.body_variables(word)
        elif word == "pragma":
            text = self.expect_kind("str", "a pragma string")[1]
            self.expect(";")
            self._state.body.append(Pragma(text[1:-1]))
        elif word == "loc":
            self.loc_directive(token)
        else:
            self.fail(f"unknown directive {token[1]!r} in a function body", token)

    def loc_directive(self, token: Token) -> None:
        """``.loc file line column`` (no semicolon; attributes after a comma are skipped)."""
        line = self.line_of(token)
        values = []
        while self.peek()[0] == "num" and self.line_of(self.peek()) == line and len(values) < 3:
            values.append(self.integer("a .loc number"))
        if len(values) < 2:
            self.fail("expected '.loc FILE LINE [COLUMN]'", token)
        extra_start = self.peek()[2]
        extra_end = extra_start
        while self.peek()[0] != "eof" and self.line_of(self.peek()) == line:
            token = self.advance()
            if token[1] in ("{", "}", ";", "@"):
                self.fail(f"unexpected {token[1]!r} in a .loc directive", token)
            extra_end = token[2] + len(token[1])
        extra = self.source.text[extra_start:extra_end] if extra_end > extra_start else ""
        self._state.loc = loc = SourceLoc(*values, extra=extra)
        self._state.body.append(loc)

    def reg_decl(self) -> None:
        pre = self.prelude()
        state = self._state
        while True:
            token = self.name_token("a register")
            if self.accept("<"):
                count_token = self.peek()
                count = self.integer("a register count")
                if not 0 < count <= _MAX_REGS:
                    self.fail(f"register count {count} is out of range", count_token)
                self.expect(">")
                self._declare_range(token, count, pre.type, pre.vector)
            else:
                unique = self.declare(token, "reg", ("reg", pre.type, pre.vector), pre.vector)
                state.registers.setdefault(unique, RegDecl(unique, pre.type, pre.vector))
                state.body.append(RegisterDecl(pre.type, pre.vector, (unique,)))
            if not self.accept(","):
                break
        self.expect(";", "';' after the register declaration")

    def _declare_range(self, token: Token, count: int, ptx_type: str, vector: int) -> None:
        state, prefix, offset = self._state, token[1], token[2]
        names, renamed = [], False
        signature = ("reg", ptx_type, vector)
        for k in range(count):
            name = f"{prefix}{k}"
            unique = self.declare(("word", name, offset), "reg", signature, vector)
            renamed |= unique != name
            names.append(unique)
            if unique not in state.registers:
                state.registers[unique] = RegDecl(unique, ptx_type, vector)
        state.body.append(RegisterDecl(ptx_type, vector, tuple(names),
                                       None if renamed else prefix, None if renamed else count))

    def body_variables(self, space: str) -> None:
        pre = self.prelude()
        state = self._state
        while True:
            token = self.name_token("a variable")
            dims = self.dims()
            init = self.initializer() if self.accept("=") else None
            signature = ("var", space, pre.type, pre.vector, dims, pre.align, init)
            unique = self.declare(token, "var", signature)
            var = Variable(unique, space, pre.type, pre.vector, dims, pre.align, None, init,
                           tuple(pre.attributes), self.line_of(token))
            if all(v.name != unique for v in state.variables):
                state.variables.append(var)
            state.body.append(var)
            if not self.accept(","):
                break
        self.expect(";", "';' after the declaration")

    def label_statement(self) -> None:
        token = self.advance()
        self.advance()  # ':'
        state = self._state
        follow = self.peek()
        word = follow[1][1:] if follow[0] == "dot" else ""
        if word == "callprototype":
            self.advance()
            unique = self.define_label(token, "callprototype")
            state.prototypes[unique] = proto = self.call_prototype(unique)
            state.body.append(proto)
        elif word in ("branchtargets", "calltargets"):
            self.advance()
            unique = self.define_label(token, word)
            self._target_list(unique, word)
        else:
            unique = self.define_label(token, "code")
            state.label_index[unique] = len(state.drafts)
            state.body.append(LabelDef(unique))

    def _target_list(self, name: str, kind: str) -> None:
        state = self._state
        owner = ("table", len(state.tables))
        items: list[str] = []
        while True:
            token = self.name_token("a label" if kind == "branchtargets" else "a function")
            if kind == "branchtargets":
                self.label_use(token, ("code",), owner)
            else:
                self.module_refs.append((token[1], token))
            items.append(token[1])
            if not self.accept(","):
                break
        self.expect(";")
        state.tables.append(TargetList(name, kind, tuple(items)))
        state.body.append(("table", len(state.tables) - 1))

    # -- instructions ----------------------------------------------------------------

    def instruction(self) -> None:
        start = self.peek()
        guard = None
        if self.accept("@"):
            negated = self.accept("!")
            token = self.expect_kind("word", "a predicate register after '@'")
            reg = self.name_operand(token, "@", [])
            decl = self._state.registers.get(reg.name) if isinstance(reg, Reg) else None
            if decl is None or decl.type != "pred" or reg.component:
                self.fail(f"a guard must be a predicate register, found {token[1]!r}", token)
            guard = Reg(reg.name, negated, reg.component)
        token = self.expect_kind("word", "an instruction")
        opcode, *mods = token[1].split(".")
        if opcode not in OPCODES:
            self.fail(f"unknown opcode {opcode!r}", token)
        for mod in mods:
            if not is_known_modifier(mod):
                self.fail(f"unknown modifier '.{mod}' of {opcode!r}", token)
        operands: list[Operand] = []
        if not self.at(";"):
            while True:
                operands.append(self.operand(opcode, operands))
                if not self.accept(","):
                    break
        self.expect(";", "',' or ';' after the operand")
        problem = check_operands(opcode, mods, operands)
        if problem is not None:
            self.fail(problem, token)
        state = self._state
        state.drafts.append(_Draft(opcode, tuple(mods), operands, guard, start, state.loc))
        state.body.append(len(state.drafts) - 1)

    def operand(self, opcode: str, before: list[Operand]) -> Operand:
        kind, text, _ = token = self.peek()
        if kind == "word":
            self.advance()
            first = Sink() if text == "_" else self.name_operand(token, opcode, before)
            if self.at("|") and isinstance(first, (Reg, Sink)):
                self.advance()
                second_token = self.expect_kind("word", "a register after '|'")
                second = Sink() if second_token[1] == "_" else \
                    self.name_operand(second_token, opcode, before)
                if not isinstance(second, (Reg, Sink)):
                    self.fail(f"expected a register after '|', found {second_token[1]!r}",
                              second_token)
                return RegPair(first, second)
            return first
        if kind == "p":
            if text == "!":
                self.advance()
                inner = self.expect_kind("word", "a register after '!'")
                reg = self.name_operand(inner, opcode, before)
                if not isinstance(reg, Reg):
                    self.fail(f"only registers can be negated, found {inner[1]!r}", inner)
                return Reg(reg.name, True, reg.component)
            if text == "[":
                return self.bracket_operand(opcode)
            if text == "{":
                return self.vector_operand(opcode)
            if text == "(" and opcode == "call":
                return self.call_list()
        if kind == "num" or (kind == "p" and text in "-~("):
            return self.const_expr()
        self.fail(f"expected an operand, found "
                  f"{'the end of the file' if kind == 'eof' else repr(text)}")

    def name_operand(self, token: Token, opcode: str, before: list[Operand]) -> Operand:
        text = token[1]
        base, _, component = text.partition(".")
        hit = self.lookup(base)
        if hit is not None:
            unique, kind, vector = hit
            if kind == "reg":
                if not component:
                    return Reg(unique)
                if vector > 1 and component in _COMPONENTS:
                    return Reg(unique, False, component)
                self.fail(f"{text!r}: register {base} has no component {component!r}", token)
            if component:
                self.fail(f"unknown name {text!r}", token)
            return Symbol(unique)
        if base.startswith("%"):
            if is_special_register(base, component or None):
                return SpecialReg(text)
            if base in SPECIAL_REGISTERS:
                self.fail(f"unknown special register {text}", token)
            self.fail(f"undeclared register {base}", token)
        if component:
            self.fail(f"unknown name {text!r}", token)
        owner = ("instr", len(self._state.drafts))
        if opcode == "bra":
            return self.label_use(token, ("code",), owner)
        if opcode == "brx" and before:
            return self.label_use(token, ("branchtargets",), owner)
        if opcode == "call" and len(before) >= 2 and isinstance(before[-1], ParamList):
            return self.label_use(token, ("callprototype", "calltargets"), owner)
        self.module_refs.append((text, token))
        return Symbol(text)

    def bracket_operand(self, opcode: str) -> Operand:
        """``[%rd1+16]``, ``[sym]``, ``[sym-4]``, ``[0x100]`` or ``[tex, {%f1, %f2}]``."""
        self.expect("[")
        token = self.peek()
        base: Reg | Symbol | None = None
        offset = 0
        if token[0] == "word":
            self.advance()
            named = self.name_operand(token, opcode, [])
            if not isinstance(named, (Reg, Symbol)) or (isinstance(named, Reg)
                                                        and named.component):
                self.fail(f"{token[1]!r} cannot be used as an address", token)
            base = named
        elif token[0] == "eof" or token[1] == "]":
            self.fail("expected an address inside '[ ]'")
        else:
            offset = self._int_offset()
        if self.at(","):
            return self._tex_operand(base if base is not None else Imm(offset), opcode)
        if base is not None and (self.at("+") or self.at("-")):
            sign = -1 if self.advance()[1] == "-" else 1
            offset = sign * self._int_offset()
        self.expect("]", "']' to close the address")
        return Address(base, offset)

    def _int_offset(self) -> int:
        token = self.peek()
        imm = self.const_expr()
        if imm.is_float:
            self.fail("an address offset must be an integer", token)
        return int(imm.value)

    def _tex_operand(self, first: Operand, opcode: str) -> TexOperand:
        items = [first]
        while self.accept(","):
            items.append(self.operand(opcode, items))
        self.expect("]", "']' to close the operand")
        return TexOperand(tuple(items))

    def vector_operand(self, opcode: str) -> Vector:
        self.expect("{")
        elements: list[Operand] = []
        while True:
            token = self.peek()
            if token[0] == "p" and token[1] in "[{":
                self.fail(f"unexpected {token[1]!r} inside a vector operand", token)
            element = self.operand(opcode, [])
            if not isinstance(element, (Reg, SpecialReg, Imm, Sink)):
                self.fail(f"a vector operand holds registers or constants, found {element}",
                          token)
            elements.append(element)
            if self.accept("}"):
                return Vector(tuple(elements))
            self.expect(",", "',' or '}' in the vector operand")

    def call_list(self) -> ParamList:
        self.expect("(")
        items: list[Operand] = []
        if self.accept(")"):
            return ParamList(())
        while True:
            token = self.peek()
            if token[0] == "word":
                self.advance()
                items.append(Sink() if token[1] == "_" else self.name_operand(token, "", []))
            else:
                items.append(self.operand("", []))
            if self.accept(")"):
                return ParamList(tuple(items))
            self.expect(",", "',' or ')' in the call list")

    # -- finishing -------------------------------------------------------------------

    def _decode(self, opcode: str, mods: tuple[str, ...]) -> dict:
        key = (opcode, mods)
        fields = self._decoded.get(key)
        if fields is None:
            fields = decode_modifiers(opcode, mods)
            fields["iclass"] = classify(opcode, fields["types"], fields["space"], mods,
                                        fields["mode"])
            self._decoded[key] = fields
        return fields

    def _targets(self, draft: _Draft, operands: list[Operand],
                 tables: dict[str, TargetList]) -> tuple[int, ...]:
        labels = self._state.label_index
        if draft.opcode == "bra":
            return (labels[operands[0].name],)
        if draft.opcode == "brx":
            return tuple(labels[item] for item in tables[operands[1].name].items)
        return ()

    def _finish(self) -> FunctionBody:
        state = self._state
        tables = {}
        for index, table in enumerate(state.tables):
            renames = state.renames.get(("table", index), {})
            table = TargetList(table.name, table.kind, tuple(renames.get(i, i)
                                                             for i in table.items))
            tables[table.name] = table
        instructions = []
        for index, draft in enumerate(state.drafts):
            operands = draft.operands
            renames = state.renames.get(("instr", index))
            if renames:
                operands = [Label(renames.get(op.name, op.name)) if isinstance(op, Label)
                            else op for op in operands]
            line, column = self.source.position(draft.token[2])
            instructions.append(Instruction(
                draft.opcode, draft.mods, tuple(operands), draft.guard,
                **self._decode(draft.opcode, draft.mods),
                targets=self._targets(draft, operands, tables),
                line=line, column=column, loc=draft.loc))
        body = tuple(_body_item(item, instructions, state.tables, tables)
                     for item in state.body)
        return FunctionBody(state.registers, state.variables, tuple(instructions),
                            state.label_index, tables, state.prototypes, body)


def _body_item(item: BodyItem | int | tuple[str, int], instructions: list[Instruction],
               raw_tables: list[TargetList], tables: dict[str, TargetList]) -> BodyItem:
    """Body entries hold instruction and table indices until the function is complete."""
    if isinstance(item, int):
        return instructions[item]
    if isinstance(item, tuple):
        return tables[raw_tables[item[1]].name]
    return item
