"""Printing the IR back to PTX that ptxas accepts: ``to_ptx(module) -> str``."""

from __future__ import annotations

from collections.abc import Iterator

from kerncast.ptx._ir import (
    Alias, BodyItem, CallPrototype, Function, Imm, Initializer, Instruction, LabelDef, Module,
    Param, Pragma, RegisterDecl, ScopeEnd, ScopeStart, Section, SourceLoc, SymbolRef, TargetList,
    Variable,
)

__all__ = ["to_ptx", "format_instruction"]


def _imm(imm: Imm) -> str:
    return str(imm)


def _init(value: Initializer) -> str:
    if isinstance(value, tuple):
        return "{" + ", ".join(_init(v) for v in value) + "}"
    if isinstance(value, SymbolRef):
        name = f"generic({value.name})" if value.generic else value.name
        return f"{name}+{value.offset}" if value.offset else name
    return _imm(value)


def _dims(dims: tuple[int | None, ...]) -> str:
    return "".join(f"[{'' if d is None else d}]" for d in dims)


def _variable(var: Variable) -> str:
    parts = [f".{var.linkage}"] if var.linkage else []
    parts.append(f".{var.space}")
    parts += [f".attribute({a})" for a in var.attributes]
    if var.align is not None:
        parts.append(f".align {var.align}")
    if var.vector > 1:
        parts.append(f".v{var.vector}")
    parts.append(f".{var.type}")
    text = " ".join(parts) + f" {var.name}{_dims(var.dims)}"
    if var.init is not None:
        text += " = " + _init(var.init)
    return text + ";"


def _param(param: Param) -> str:
    parts = [f".{param.space}"]
    if param.align is not None:
        parts.append(f".align {param.align}")
    if param.vector > 1:
        parts.append(f".v{param.vector}")
    parts.append(f".{param.type}")
    if param.ptr:
        parts.append(".ptr")
        if param.ptr_space:
            parts.append(f".{param.ptr_space}")
        if param.ptr_align is not None:
            parts.append(f".align {param.ptr_align}")
    return " ".join(parts) + f" {param.name}{_dims(param.dims)}"


def format_instruction(instr: Instruction) -> str:
    """One instruction as PTX text, without indentation (``@%p1 bra $L__BB0_2;``)."""
    guard = f"@{instr.guard} " if instr.guard is not None else ""
    operands = ", ".join(map(str, instr.operands))
    return f"{guard}{instr.name}" + (f" \t{operands};" if operands else ";")


def _register_decl(decl: RegisterDecl) -> str:
    head = ".reg " + (f".v{decl.vector} " if decl.vector > 1 else "") + f".{decl.type} "
    if decl.prefix is not None:
        return f"{head}{decl.prefix}<{decl.count}>;"
    return head + ", ".join(decl.names) + ";"


def _prototype(proto: CallPrototype) -> str:
    returns = f"({', '.join(map(_param, proto.returns))}) " if proto.returns else ""
    params = f" ({', '.join(map(_param, proto.params))})" if proto.params else ""
    noreturn = " .noreturn" if proto.noreturn else ""
    return f"{proto.name}: .callprototype {returns}_{params}{noreturn};"


def _body_item(item: BodyItem) -> str:
    if isinstance(item, LabelDef):
        return f"{item.name}:"
    if isinstance(item, RegisterDecl):
        return "\t" + _register_decl(item)
    if isinstance(item, Variable):
        return "\t" + _variable(item)
    if isinstance(item, Pragma):
        return f'\t.pragma "{item.text}";'
    if isinstance(item, ScopeStart):
        return "\t{"
    if isinstance(item, ScopeEnd):
        return "\t}"
    if isinstance(item, TargetList):
        return f"{item.name}: .{item.kind} {', '.join(item.items)};"
    if isinstance(item, CallPrototype):
        return "\t" + _prototype(item)
    raise TypeError(f"not a body item: {item!r}")


def _body(func: Function, files: set[int]) -> Iterator[str]:
    for item in func.body or ():
        if isinstance(item, Instruction):
            yield "\t" + format_instruction(item)
        elif isinstance(item, SourceLoc):
            if item.file in files:
                yield f"\t.loc {item.file} {item.line} {item.column}{item.extra}"
        else:
            yield _body_item(item)


def _header(func: Function) -> Iterator[str]:
    linkage = f".{func.linkage} " if func.linkage else ""
    kind = ".entry" if func.is_entry else ".func"
    returns = f" ({', '.join(map(_param, func.returns))})" if func.returns else ""
    yield f"{linkage}{kind}{returns} {func.name}("
    for index, param in enumerate(func.params):
        yield "\t" + _param(param) + ("," if index < len(func.params) - 1 else "")
    yield ")"
    for word, values in func.directives:
        yield f".{word} {', '.join(map(str, values))}".rstrip()
    for pragma in func.pragmas:
        yield f'.pragma "{pragma}";'


def _function(func: Function, files: set[int]) -> Iterator[str]:
    yield from _header(func)
    if func.is_declaration:
        yield ";"
        return
    yield "{"
    yield from _body(func, files)
    yield "}"


def to_ptx(module: Module) -> str:
    """PTX text of ``module``.

    The output parses back to the same instructions (``Instruction`` equality
    ignores positions) and is accepted by ptxas for the module's target.
    """
    lines = [f".version {module.version}", f".target {', '.join(module.targets)}",
             f".address_size {module.address_size}", ""]
    lines += [f'.file {index} "{name}"' for index, name in sorted(module.files.items())]
    files = set(module.files)
    for item in module.items:
        if isinstance(item, Function):
            lines += [*_function(item, files), ""]
        elif isinstance(item, Variable):
            lines.append(_variable(item))
        elif isinstance(item, Alias):
            lines.append(f".alias {item.name}, {item.target};")
        elif isinstance(item, Pragma):
            lines.append(f'.pragma "{item.text}";')
        elif isinstance(item, Section):
            lines += [f".section {item.name}", "{" + item.text + "}"]
    return "\n".join(lines) + "\n"
