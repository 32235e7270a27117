"""Parser golden tests: operands, modifiers, declarations, scopes, calls, errors."""

from __future__ import annotations

import re

import pytest

from kerncast import InputError
from kerncast.ptx import (
    Address, Imm, InstrClass, Label, ParamList, PTXSyntaxError, Reg, RegDecl, RegPair, Sink,
    SpecialReg, Symbol, SymbolRef, TexOperand, Vector, parse, to_ptx,
)
from tests.ptx._util import HEADER, kernel, ptxas_accepts

REGS = """\
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<4>;"""


def instrs(body: str, **kw) -> list:
    return list(parse(kernel(REGS + "\n" + body, **kw)).function("k").instructions)


def one(line: str, **kw):
    (instr,) = instrs(line, **kw)
    return instr


# --------------------------------------------------------------------------- module


def test_header_and_kernels():
    text = HEADER + """
.visible .entry a(.param .u64 a_p) { ret; }
.entry b() { exit; }
.func f() { ret; }
"""
    module = parse(text, filename="two.ptx")
    assert (module.version, module.targets, module.address_size) == ("8.0", ("sm_90",), 64)
    assert module.target == "sm_90" and module.filename == "two.ptx"
    assert [f.name for f in module.entries] == ["a", "b"]
    assert module.function("a").linkage == "visible" and module.function("b").linkage is None
    assert not module.function("f").is_entry


def test_unknown_function_lists_the_kernels():
    module = parse(kernel("ret;"))
    with pytest.raises(InputError, match=r"no function 'x'; its kernels are k"):
        module.function("x")


def test_targets_and_default_address_size():
    module = parse(".version 7.0\n.target sm_80, texmode_independent\n.entry k() { ret; }")
    assert module.targets == ("sm_80", "texmode_independent") and module.address_size == 32


def test_module_variables_with_initializers():
    module = parse(HEADER + """
.global .align 4 .b8 bytes[4] = {1, 0, 0x80, 077};
.const .align 8 .f64 c[2] = {0d3FF0000000000000, 1.5};
.global .align 8 .u64 ptrs[2] = {generic(bytes), bytes+4};
.extern .shared .align 16 .b8 dyn[];
.visible .global .v2 .f32 pair, other;
.shared .align 4 .f32 grid[4][8];
.entry k() { ret; }
""")
    byts = module.variable("bytes")
    assert (byts.space, byts.type, byts.dims, byts.align, byts.size) == ("global", "b8", (4,), 4, 4)
    assert [i.value for i in byts.init] == [1, 0, 128, 63]
    c = module.variable("c")
    assert c.init[0] == Imm(1.0, "f64", 0x3FF0000000000000) and c.init[1].value == 1.5
    assert module.variable("ptrs").init == (SymbolRef("bytes", 0, True), SymbolRef("bytes", 4))
    dyn = module.variable("dyn")
    assert dyn.linkage == "extern" and dyn.dims == (None,) and dyn.size is None
    pair = module.variable("pair")
    assert (pair.vector, pair.size, pair.linkage) == (2, 8, "visible")
    assert module.variable("other").linkage == "visible"
    assert module.variable("grid").size == 128


def test_params_and_performance_directives():
    module = parse(HEADER + """
.visible .entry k(.param .u64 .ptr .global .align 16 p, .param .u32 n,
                  .param .align 8 .b8 s[24])
.maxntid 256, 1, 1
.minnctapersm 2
.maxnreg 64
.pragma "nounroll";
{ ret; }
.func (.param .b32 rv) f(.param .b64 x, .reg .b32 y) .noreturn { ret; }
""")
    k = module.function("k")
    p, n, s = k.params
    assert (p.type, p.ptr, p.ptr_space, p.ptr_align, p.size, p.space) == \
        ("u64", True, "global", 16, 8, "param")
    assert (n.type, n.size, n.count) == ("u32", 4, 1)
    assert (s.align, s.dims, s.size, s.count) == (8, (24,), 24, 24)
    assert (k.maxntid, k.minnctapersm, k.maxnreg, k.pragmas) == ((256, 1, 1), 2, 64, ("nounroll",))
    f = module.function("f")
    assert [r.name for r in f.returns] == ["rv"] and f.noreturn
    assert f.params[1].space == "reg" and f.registers["y"] == RegDecl("y", "b32")


def test_register_declarations_expand_ranges():
    text = kernel(".reg .b32 %r<3>, %x;\n.reg .v4 .f32 %v;\n.reg .pred p;\nret;")
    func = parse(text).function("k")
    assert list(func.registers) == ["%r0", "%r1", "%r2", "%x", "%v", "p"]
    assert func.registers["%v"] == RegDecl("%v", "f32", 4)
    assert func.registers["p"].type == "pred"


def test_declaration_only_function():
    module = parse(HEADER + ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
                   ".entry k() { ret; }")
    f = module.function("vprintf")
    assert f.is_declaration and f.body is None and f.linkage == "extern"
    assert module.entries == (module.function("k"),)


# --------------------------------------------------------------------------- instructions


def test_load_modifiers_are_decoded():
    instr = one("ld.global.nc.v4.f32 {%f1, %f2, %f3, _}, [%rd1+16];")
    assert (instr.opcode, instr.modifiers) == ("ld", ("global", "nc", "v4", "f32"))
    assert (instr.space, instr.vector, instr.types, instr.flags) == \
        ("global", 4, ("f32",), frozenset({"nc"}))
    assert instr.operands == (Vector((Reg("%f1"), Reg("%f2"), Reg("%f3"), Sink())),
                              Address(Reg("%rd1"), 16))
    assert instr.iclass is InstrClass.LD_GLOBAL and instr.name == "ld.global.nc.v4.f32"


def test_position_is_recorded():
    func = parse(kernel(REGS + "\n\n   add.s32 %r1, %r2, 3;")).function("k")
    instr = func.instructions[0]
    assert (instr.line, instr.column) == (13, 4)


def test_cvt_has_two_types_and_rounding():
    instr = one("cvt.rni.s32.f32 %r1, %f1;")
    assert instr.types == ("s32", "f32") and instr.rounding == "rni" and instr.type == "f32"


@pytest.mark.parametrize("line, field, value", [
    ("setp.lo.u32 %p1, %r1, %r2;", "cmp", "lo"),
    ("setp.lt.and.s32 %p1, %r1, %r2, %p2;", "boolop", "and"),
    ("mul.lo.s32 %r1, %r2, %r3;", "flags", frozenset({"lo"})),
    ("mul.wide.u32 %rd1, %r2, %r3;", "flags", frozenset({"wide"})),
    ("atom.global.cas.b32 %r1, [%rd1], %r2, %r3;", "atomic_op", "cas"),
    ("red.shared.add.u32 [%rd1], %r2;", "atomic_op", "add"),
    ("ld.global.cg.u32 %r1, [%rd1];", "cache", "cg"),
    ("st.global.wt.u32 [%rd1], %r1;", "cache", "wt"),
    ("shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;", "mode", "bfly"),
    ("vote.sync.ballot.b32 %r1, %p1, -1;", "mode", "ballot"),
    ("bar.sync 0;", "mode", "sync"),
    ("bar.warp.sync -1;", "mode", "warp"),
    ("div.full.f32 %f1, %f2, %f3;", "flags", frozenset({"full"})),
    ("add.rn.ftz.sat.f32 %f1, %f2, %f3;", "flags", frozenset({"ftz", "sat"})),
    ("ld.acquire.gpu.global.u32 %r1, [%rd1];", "scope", "gpu"),
    ("ld.acquire.gpu.global.u32 %r1, [%rd1];", "sem", "acquire"),
    ("cvta.to.global.u64 %rd1, %rd2;", "space", "global"),
    ("ld.shared::cta.u32 %r1, [%rd1];", "space", "shared"),
    ("ld.u32 %r1, [%rd1];", "space", None),
    ("bra.uni $L1;\n$L1:", "flags", frozenset({"uni"})),
])
def test_modifier_fields(line, field, value):
    assert getattr(instrs(line)[0], field) == value


def test_immediates_of_every_form():
    body = """
    mov.u32 %r1, 0x1F;
    mov.u32 %r2, 017;
    mov.u32 %r3, 0b101U;
    mov.s32 %r4, -42;
    mov.f32 %f1, 0f3F800000;
    mov.f64 %fd1, 0d4000000000000000;
    mov.f64 %fd2, 2.5e1;
    mov.u32 %r5, (1 << 4) + 3 * 2;
    mov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;"""
    values = [i.operands[1] for i in instrs(body)]
    assert [(v.value, v.kind) for v in values] == [
        (31, "s64"), (15, "s64"), (5, "u64"), (-42, "s64"), (1.0, "f32"), (2.0, "f64"),
        (25.0, "f64"), (22, "s64"), (2**64 - 1, "s64")]
    assert values[4].bits == 0x3F800000 and str(values[4]) == "0f3F800000"


def test_special_registers():
    ops = [i.operands[1] for i in instrs("""
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.y;
    mov.u32 %r3, %ctaid.z;
    mov.u32 %r4, %laneid;
    mov.u64 %rd1, %clock64;
    mov.u32 %r5, %lanemask_lt;
    mov.u32 %r6, %nctaid.x;""")]
    assert ops[0] == SpecialReg("%tid.x") and ops[0].base == "%tid" and ops[0].component == "x"
    assert [o.name for o in ops[1:]] == ["%ntid.y", "%ctaid.z", "%laneid", "%clock64",
                                         "%lanemask_lt", "%nctaid.x"]
    assert ops[3].component is None


def test_addresses():
    ops = [i.operands for i in instrs("""
    .shared .align 4 .b8 buf[64];
    ld.param.u32 %r1, [n];
    ld.shared.u32 %r2, [buf+8];
    ld.global.u32 %r3, [%rd1+-4];
    ld.global.u32 %r4, [%rd1-8];
    st.shared.u32 [buf], %r3;
    ld.global.u32 %r5, [%r1];
    ld.u32 %r6, [4096];""")]
    assert ops[0][1] == Address(Symbol("n"), 0)
    assert ops[1][1] == Address(Symbol("buf"), 8)
    assert ops[2][1] == Address(Reg("%rd1"), -4) and ops[3][1] == Address(Reg("%rd1"), -8)
    assert ops[4][0] == Address(Symbol("buf"))
    assert ops[5][1] == Address(Reg("%r1")) and ops[6][1] == Address(None, 4096)


def test_guards_negation_pairs_and_sinks():
    a, b, c, d = instrs("""
    setp.lt.s32 %p1|%p2, %r1, %r2;
    @!%p1 add.s32 %r3, %r3, 1;
    vote.sync.any.pred %p3, !%p2, -1;
    shfl.sync.idx.b32 _|%p3, %r1, 0, 31, -1;""")
    assert a.operands[0] == RegPair(Reg("%p1"), Reg("%p2"))
    assert b.guard == Reg("%p1", negated=True) and b.is_conditional
    assert c.operands[1] == Reg("%p2", negated=True)
    assert d.operands[0] == RegPair(Sink(), Reg("%p3"))


def test_vector_registers_and_components():
    a, b = instrs(".reg .v2 .f32 %v;\nmov.v2.f32 %v, {%f1, 0f00000000};\nmov.f32 %f2, %v.y;")
    assert a.operands[1] == Vector((Reg("%f1"), Imm(0.0, "f32", 0)))
    assert b.operands[1] == Reg("%v", component="y")


def test_texture_operand():
    instr = one("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];")
    assert instr.operands[1] == TexOperand((Reg("%rd1"), Vector((Reg("%f5"), Reg("%f6")))))
    assert instr.iclass is InstrClass.TEXTURE and instr.types == ("f32", "f32")


def test_branch_targets_are_resolved():
    func = parse(kernel(REGS + """
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra DONE;
    add.s32 %r1, %r1, 1;
DONE:
    ret;""")).function("k")
    assert func.labels == {"DONE": 3}
    bra = func.instructions[1]
    assert bra.operands == (Label("DONE"),) and bra.targets == (3,)


def test_branch_tables():
    func = parse(kernel(REGS + """
    ts: .branchtargets A, B;
    brx.idx %r1, ts;
A:  ret;
B:  exit;""")).function("k")
    assert func.branch_tables["ts"].items == ("A", "B")
    assert func.instructions[0].targets == (1, 2)


def test_calls_direct_and_indirect():
    module = parse(HEADER + """
.func (.param .b32 rv) f(.param .b32 x) { st.param.b32 [rv], 1; ret; }
.entry k() {
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    {
    .param .b32 param0;
    st.param.b32 [param0], %r1;
    .param .b32 retval0;
    call.uni (retval0), f, (param0);
    ld.param.b32 %r1, [retval0];
    }
    {
    .param .b32 param0;
    .param .b32 retval0;
    mov.u64 %rd1, f;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (retval0), %rd1, (param0), proto;
    }
    ret;
}""")
    k = module.function("k")
    direct = k.instructions[1].call
    assert direct.returns == (Symbol("retval0"),) and direct.target == Symbol("f")
    assert direct.args == (Symbol("param0"),) and direct.prototype is None
    indirect = k.instructions[4]
    assert indirect.operands[0] == ParamList((Symbol("retval0"),))
    assert indirect.call.target == Reg("%rd1") and indirect.call.prototype == "proto"
    assert k.prototypes["proto"].params[0].type == "b32"
    assert k.instructions[1].iclass is InstrClass.CONTROL


# --------------------------------------------------------------------------- scopes


def test_nested_scopes_rename_shadowing_registers_and_labels():
    func = parse(kernel("""
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    {
        .reg .b32 %r1;
        mov.u32 %r1, 5;
    L:  add.u32 %r1, %r1, 1;
        setp.lt.u32 %p1, %r1, 9;
        @%p1 bra L;
    }
    {
        .reg .b32 t;
    L:  mov.u32 t, %r1;
        @%p1 bra L;
    }
    {
        .reg .b32 t;
        mov.u32 t, 1;
    }
    mov.u32 %r2, %r1;
    ret;""")).function("k")
    names = [str(i.operands[0]) for i in func.instructions[:3]]
    assert names[:3] == ["%r1$1", "%r1$1", "%p1"]
    assert func.instructions[1].operands[1] == Reg("%r1$1")
    assert func.instructions[3].targets == (1,) and func.instructions[5].targets == (4,)
    assert set(func.labels) == {"L", "L$1"}
    assert func.instructions[6].operands[0] == Reg("t")  # identical sibling declarations merge
    assert func.instructions[7].operands[1] == Reg("%r1")


def test_scoped_declarations_with_other_types_are_renamed():
    func = parse(kernel("{ .reg .b32 t; mov.u32 t, 1; }\n{ .reg .b64 t; mov.u64 t, 2; }\nret;"))\
        .function("k")
    assert func.registers["t"].type == "b32" and func.registers["t$1"].type == "b64"


def test_labels_resolve_to_enclosing_scope():
    func = parse(kernel(".reg .pred p;\n{ @p bra OUT; }\nOUT: ret;")).function("k")
    assert func.instructions[0].targets == (1,)


def test_comments_pragmas_and_debug_info_are_tolerated():
    text = HEADER + """
.file 1 "k.cu"
/* block
   comment */
.entry k() // header comment
{
    .reg .b32 %r<2>;
    .pragma "nounroll";
    .loc 1 7 3
    mov.u32 %r1, 1; // trailing
    .loc 1 8 5, function_name $L__info, inlined_at 1 7 3
    ret;
}
.section .debug_str { $L__info: .b8 107, 0 }
"""
    module = parse(text)
    k = module.function("k")
    assert module.files == {1: "k.cu"}
    assert k.instructions[0].loc.line == 7 and k.instructions[1].loc.column == 5
    assert k.instructions[1].loc.extra.startswith(", function_name")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("body, message, line, column", [
    ("ldd.global.f32 %f1, [%rd2];", "unknown opcode 'ldd'", 10, 5),
    ("ld.glbal.f32 %f1, [%rd2];", "unknown modifier '.glbal' of 'ld'", 10, 5),
    ("add.s32 %r1, %r9, 1;", "undeclared register %r9", 10, 18),
    ("add.s32 %r1, %r2;", "'add' takes 3 operands, found 2", 10, 5),
    ("add.s32 %r1, %r2, 1", "expected ',' or ';' after the operand", 11, 5),
    ("bra NOWHERE;", "undefined label 'NOWHERE'", 10, 9),
    ("ld.global.f32 %f1, %rd2;", "'ld' needs a memory operand", 10, 5),
    ("mov.u32 %tid.x, 1;", "special register %tid.x is read-only", 10, 5),
    ("mov.u32 %r1, %tid.w;", "unknown special register %tid.w", 10, 18),
    ("mov.u32 %r1, 0f3F80;", "malformed number '0f3F80'", 10, 18),
    ("mov.u32 %r1, 1 # 2;", "unexpected character '#'", 10, 20),
    ("mov.u32 %r1, missing;", "undefined symbol 'missing'", 10, 18),
    ("L: L: ret;", "label 'L' is defined twice", 10, 8),
    (".reg .b32 %r1;", "%r1 is declared twice in the same scope", 10, 15),
    (".foo .b32 x;", "unknown directive '.foo' in a function body", 10, 5),
    ("mov.u32 %r1, 99999999999999999999999;", "integer constant out of the 64-bit range", 10, 18),
    ("/* never closed", "unterminated comment", 10, 5),
    ("@%r1 bra L; L:", "a guard must be a predicate register, found '%r1'", 10, 6),
])
def test_errors_carry_position_and_text(body, message, line, column):
    text = kernel("    .reg .b32 %r<3>;\n    .reg .f32 %f<2>;\n    .reg .b64 %rd<3>;\n    "
                  + body + "\n    ret;")
    with pytest.raises(PTXSyntaxError) as info:
        parse(text, filename="bad.ptx")
    err = info.value
    assert message in str(err)
    assert (err.line, err.column) == (line, column)
    assert str(err).startswith(f"bad.ptx: PTX line {line}, column {column}: ")
    assert isinstance(err, InputError)


def test_error_message_quotes_the_line():
    text = kernel(".reg .f32 %f1;\n.reg .b64 %rd2;\nldd.global.f32 %f1, [%rd2];")
    with pytest.raises(PTXSyntaxError) as info:
        parse(text)
    assert str(info.value) == ("PTX line 9, column 1: unknown opcode 'ldd' in "
                               "'ldd.global.f32 %f1, [%rd2];'")
    assert info.value.text == "ldd.global.f32 %f1, [%rd2];"


@pytest.mark.parametrize("text, message", [
    ("", "a PTX module starts with '.version', found the end of the file"),
    (".target sm_90", "a PTX module starts with '.version'"),
    (".version 8.0\n.entry k() { ret; }", "expected '.target' after '.version'"),
    (HEADER + ".entry k() { ret;", "function k opened on line 4 is missing its closing '}'"),
    (HEADER + ".entry k() { ret; }}", "expected a directive such as .entry or .global"),
    (HEADER + ".entry k() { { ret; }", "missing its closing '}'"),
    (HEADER + ".blah x;", "unknown directive '.blah' at module level"),
    (HEADER + ".entry k() { ret; }\n.entry k() { ret; }", "'k' is defined twice"),
    (HEADER + ".global .u32 x = ;", "expected a constant"),
    (HEADER + ".entry k(.param .u32 a, .param .u32 a) { ret; }",
     "a is declared twice in the same scope"),
    (HEADER + '.entry k() { .pragma "x" }', "expected ';'"),
    (HEADER + ".global .u64 p = generic(nothing);", "undefined symbol 'nothing'"),
])
def test_module_level_errors(text, message):
    with pytest.raises(PTXSyntaxError, match=re.escape(message)) as info:
        parse(text)
    assert info.value.line >= 1 and info.value.column >= 1


def test_parse_needs_text():
    with pytest.raises(TypeError):
        parse(b".version 8.0")  # type: ignore[arg-type]


ALIAS = HEADER + """
.visible .func foo(.param .u32 a)
{
    ret;
}
.visible .func bar(.param .u32 a);
.alias bar, foo;
.visible .entry k()
{
    .param .u32 param0;
    st.param.u32 [param0], 1;
    call.uni bar, (param0);
    ret;
}
"""


def test_alias(tmp_path):
    module = parse(ALIAS)
    assert module.function("bar").is_declaration
    assert module.callee("bar").name == "foo" and not module.callee("bar").is_declaration
    assert repr(module) == "Module(<text>, sm_90, functions: foo, bar, k)"
    assert repr(module.function("k")) == "Function('k', entry, 0 params, 3 instructions)"
    result = ptxas_accepts(to_ptx(module), tmp_path)
    assert result.returncode == 0, result.stderr


def test_alias_needs_a_function():
    with pytest.raises(PTXSyntaxError, match="'.alias' needs a declared function"):
        parse(HEADER + ".global .u32 x;\n.func f();\n.alias f, x;")
