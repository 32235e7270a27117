"""The flat program the emulator runs: the kernel with its device functions inlined.

``call`` of a ``.func`` with a body is expanded in place: the callee's instructions
follow the ``call`` (which itself does nothing but count as an instruction), its
registers and per-activation variables get a namespace of their own, its ``.param``
parameters are aliases of the caller's argument variables, and ``ret`` becomes a
branch to the instruction after the callee. Recursion and indirect calls cannot be
inlined and are reported as unsupported.

The control-flow graph of the flat program (built with :func:`kerncast.ptx.build_cfg`
on a synthetic :class:`~kerncast.ptx.Function`) gives the reconvergence point of
every branch (its block's immediate post-dominator). The program is cut into
*segments*: straight runs of instructions that start at a block start or after a
barrier and end at a branch, an exit, a barrier or the next segment start. Warps
only ever stop between segments, so a segment runs for a whole group of warps in
one go.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kerncast.emu._errors import UnsupportedInstruction
from kerncast.ptx import (
    Function, Imm, Instruction, InstrClass, Label, Module, Param, Reg, RegDecl, Sink,
    Symbol, Variable, build_cfg,
)

__all__ = ["Frame", "PInstr", "Program", "build_program", "EXIT_PC"]

EXIT_PC = -1
"""Reconvergence point of branches whose paths only meet when the threads exit."""

_NOOP_EXTERNALS = frozenset(("vprintf",))
_TRAP_EXTERNALS = frozenset(("__assertfail", "__assert_fail"))
_BARRIERS = frozenset(("bar", "barrier"))


@dataclass(eq=False)
class Frame:
    """One inlined activation of a function (the kernel is frame 0)."""

    id: int
    func: Function
    parent: Frame | None = None
    call_line: int = 0
    aliases: dict[str, tuple[Frame, str]] = field(default_factory=dict)

    def reg(self, name: str) -> str:
        """The program-wide name of register ``name`` of this frame."""
        return name if self.id == 0 else f"{name}@{self.id}"


@dataclass(eq=False)
class PInstr:
    """One instruction of the flat program.

    ``kind`` is ``"op"`` for an ordinary instruction, ``"call"`` for an inlined call
    (a no-op), ``"ret"`` for a callee's ``ret`` (a branch to ``targets[0]``),
    ``"bind"`` for a copy of an argument or result of a ``.reg``-parameter function
    (``bind`` holds the destination and source registers and the type), ``"noop"``
    for a call of an external that does nothing (``vprintf``) and ``"trap"`` for a
    call of ``__assertfail``.
    """

    instr: Instruction
    frame: Frame
    kind: str = "op"
    targets: tuple[int, ...] = ()
    bind: tuple = ()

    @property
    def line(self) -> int:
        return self.instr.line

    @property
    def iclass(self) -> InstrClass:
        return self.instr.iclass


@dataclass(eq=False)
class Program:
    """The flat program of one kernel, its CFG facts and its segments."""

    kernel: Function
    module: Module | None
    items: list[PInstr]
    frames: list[Frame]
    reconvergence: dict[int, int]
    segment_starts: list[int]
    registers: dict[str, RegDecl]

    def __len__(self) -> int:
        return len(self.items)

    def segment_end(self, start: int) -> int:
        """One past the last instruction of the segment starting at ``start``."""
        return self._ends[start]

    def __post_init__(self) -> None:
        starts = self.segment_starts
        self._ends = {s: e for s, e in zip(starts, [*starts[1:], len(self.items)])}

    # -- symbols -------------------------------------------------------------------

    def resolve(self, frame: Frame, name: str) -> tuple[str, str, Variable | Param | None]:
        """What symbol ``name`` means in ``frame``: ``(space, key, declaration)``.

        ``space`` is ``kparam`` (a kernel parameter), ``shared``, ``local``, ``param``
        (a per-thread call parameter), ``const``, ``global`` or ``func``; ``key`` is
        unique over the program (per activation for ``local`` and ``param``).
        """
        seen = 0
        while name in frame.aliases:
            frame, name = frame.aliases[name]
            seen += 1
            if seen > 64:
                break
        func = frame.func
        if frame.id == 0:
            for param in func.params:
                if param.name == name:
                    return "kparam", name, param
        for var in func.variables:
            if var.name == name:
                if var.space in ("local", "param"):
                    return var.space, f"{name}@{frame.id}", var
                return var.space, f"{func.name}/{name}", var
        if self.module is not None:
            for var in self.module.variables:
                if var.name == name:
                    return var.space, name, var
            for other in self.module.functions:
                if other.name == name:
                    return "func", name, None
        raise UnsupportedInstruction(f"symbol {name!r} used in {func.name} is not declared in "
                                     "the module; emulate the whole PTX module, not an excerpt")

    def variables(self, space: str) -> list[tuple[str, Variable]]:
        """Every variable of ``space`` the program may use, with its key, in order."""
        out: dict[str, Variable] = {}
        if self.module is not None and space in ("shared", "const", "global"):
            for var in self.module.variables:
                if var.space == space:
                    out[var.name] = var
        for frame in self.frames:
            for var in frame.func.variables:
                if var.space != space:
                    continue
                key = f"{var.name}@{frame.id}" if space in ("local", "param") else \
                    f"{frame.func.name}/{var.name}"
                out.setdefault(key, var)
        return list(out.items())


class _Builder:
    def __init__(self, kernel: Function, module: Module | None) -> None:
        self.kernel, self.module = kernel, module
        self.items: list[PInstr] = []
        self.frames: list[Frame] = []
        self.registers: dict[str, RegDecl] = {}
        self.synthetic: list[Instruction] = []

    def function(self, name: str, line: int) -> Function:
        if self.module is None:
            raise UnsupportedInstruction(
                f"line {line}: call of {name} needs the whole PTX module; pass the Module "
                "(or its text) instead of a single Function", line=line)
        return self.module.function(name)

    def emit_frame(self, frame: Frame, stack: tuple[str, ...]) -> None:
        func = frame.func
        for decl in func.registers.values():
            key = frame.reg(decl.name)
            self.registers[key] = RegDecl(key, decl.type, decl.vector)
        base_of: list[int] = []
        pending: list[tuple[int, Instruction]] = []
        for instr in func.instructions:
            base_of.append(len(self.items))
            if instr.opcode == "call":
                self.emit_call(frame, instr, stack)
                continue
            index = len(self.items)
            if instr.opcode == "ret" and frame.id != 0:
                self.add(PInstr(instr, frame, "ret"), _as_branch(instr))
                pending.append((index, instr))
                continue
            if instr.opcode in ("bra", "brx"):
                pending.append((index, instr))
            self.add(PInstr(instr, frame), instr)
        end = len(self.items)
        base_of.append(end)
        for index, instr in pending:
            item = self.items[index]
            if item.kind == "ret":
                item.targets = (end,)
            else:
                item.targets = tuple(base_of[t] for t in instr.targets)
            self.synthetic[index] = replace(self.synthetic[index], targets=item.targets)

    def add(self, item: PInstr, synthetic: Instruction) -> None:
        self.items.append(item)
        self.synthetic.append(synthetic)

    def emit_call(self, frame: Frame, instr: Instruction, stack: tuple[str, ...]) -> None:
        spec = instr.call
        target = spec.target
        if not isinstance(target, Symbol):
            raise UnsupportedInstruction(
                f"line {instr.line}: indirect call through {target} is not supported by the "
                "emulator; call the function directly", line=instr.line, instruction=str(instr))
        name = target.name
        if name in stack:
            raise UnsupportedInstruction(
                f"line {instr.line}: recursive call of {name} ({' -> '.join((*stack, name))}) "
                "is not supported by the emulator", line=instr.line, instruction=str(instr))
        callee = self.function(name, instr.line)
        if callee.is_declaration:
            kind = "noop" if name in _NOOP_EXTERNALS else "trap" if name in _TRAP_EXTERNALS \
                else None
            if kind is None:
                raise UnsupportedInstruction(
                    f"line {instr.line}: call of external function {name} (no body in the "
                    "module) is not supported by the emulator", line=instr.line,
                    instruction=str(instr))
            self.add(PInstr(instr, frame, kind), _plain(instr))
            return
        child = Frame(len(self.frames), callee, frame, instr.line)
        self.frames.append(child)
        binds_in, binds_out = self.bind_params(frame, child, instr, spec)
        self.add(PInstr(instr, frame, "call"), _plain(instr))
        for bind in binds_in:
            self.add(PInstr(instr, frame, "bind", bind=bind), _plain(instr))
        self.emit_frame(child, (*stack, name))
        for bind in binds_out:
            self.add(PInstr(instr, frame, "bind", bind=bind), _plain(instr))

    def bind_params(self, frame: Frame, child: Frame, instr: Instruction, spec) -> tuple:
        """Alias ``.param`` parameters; copy ``.reg`` ones (before and after the body)."""
        callee = child.func
        if len(spec.args) != len(callee.params) or len(spec.returns) != len(callee.returns):
            raise UnsupportedInstruction(
                f"line {instr.line}: call of {callee.name} passes {len(spec.args)} arguments "
                f"and {len(spec.returns)} results; the function takes {len(callee.params)} "
                f"and {len(callee.returns)}", line=instr.line, instruction=str(instr))
        ins, outs = [], []
        pairs = [(p, a, True) for p, a in zip(callee.params, spec.args)]
        pairs += [(p, r, False) for p, r in zip(callee.returns, spec.returns)]
        for param, actual, incoming in pairs:
            if param.space == "param" and isinstance(actual, Symbol):
                child.aliases[param.name] = (frame, actual.name)
            elif param.space == "reg" and isinstance(actual, (Reg, Imm, Sink)):
                inner = Reg(param.name)
                if incoming:
                    ins.append((child, inner, frame, actual, param.type))
                elif not isinstance(actual, Sink):
                    outs.append((frame, actual, child, inner, param.type))
                if child.reg(param.name) not in self.registers:
                    key = child.reg(param.name)
                    self.registers[key] = RegDecl(key, param.type, param.vector)
            else:
                raise UnsupportedInstruction(
                    f"line {instr.line}: argument {actual} of the call of {callee.name} does "
                    f"not match its {param.space} parameter {param.name}", line=instr.line,
                    instruction=str(instr))
        return ins, outs


def _as_branch(instr: Instruction) -> Instruction:
    """A ``ret`` of a callee, as the CFG sees it: a (maybe guarded) branch."""
    return Instruction("bra", ("uni",), (Label("$return"),), instr.guard, iclass=InstrClass.BRANCH,
                       line=instr.line)


def _plain(instr: Instruction) -> Instruction:
    """A call (or a binding) as the CFG sees it: a straight-line instruction."""
    return Instruction("mov", ("b32",), (), None, line=instr.line)


def _segment_starts(items: list[PInstr], blocks) -> list[int]:
    starts = {b.start for b in blocks if b.start < len(items)}
    starts.add(0)
    for index, item in enumerate(items):
        op = item.instr.opcode
        if item.kind == "op" and op in _BARRIERS and item.instr.mode != "warp" \
                and index + 1 < len(items):
            starts.add(index + 1)
        if op in ("bra", "brx", "ret", "exit", "trap") and index + 1 < len(items):
            starts.add(index + 1)
        if item.kind == "trap" and index + 1 < len(items):
            starts.add(index + 1)
    return sorted(starts)


def build_program(kernel: Function, module: Module | None = None) -> Program:
    """Inline the calls of ``kernel`` and cut the result into segments.

    Raises
    ------
    UnsupportedInstruction
        For recursion, indirect calls and calls of functions without a body
        (other than ``vprintf`` and ``__assertfail``).
    """
    builder = _Builder(kernel, module)
    root = Frame(0, kernel)
    builder.frames.append(root)
    builder.emit_frame(root, (kernel.name,))
    items = builder.items
    if not items:
        raise UnsupportedInstruction(f"kernel {kernel.name} has no instructions to run")
    synthetic = Function(name=f"{kernel.name}$flat", is_entry=True, params=(),
                         instructions=tuple(builder.synthetic), body=())
    cfg = build_cfg(synthetic)
    reconv = {i: (EXIT_PC if r is None else r) for i, r in cfg.reconvergence.items()}
    starts = _segment_starts(items, cfg.blocks)
    return Program(kernel, module, items, builder.frames, reconv, starts, builder.registers)
