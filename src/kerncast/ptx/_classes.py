"""Instruction classes: the vocabulary shared by the emulator, the simulator and models.

Each instruction falls in exactly one :class:`InstrClass`; the class depends on the
opcode, the operation type, the state space and the precision modifiers only.
Divisions and square roots that compile to multi-instruction software sequences
get their own classes (``fp32_div``, ``fp64_div``, ``int_div``) rather than a flag.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["InstrClass", "classify"]


class InstrClass(str, Enum):
    """What kind of work an instruction does, at the granularity timing models need.

    Members compare equal to their string values (``InstrClass.INT == "int"``).
    """

    INT = "int"
    """Integer ALU: add/sub (also 64-bit), logic, shifts, funnel shifts, bit
    operations (popc, clz, brev, bfe, bfi, bfind, prmt, lop3), integer compares
    (setp/set on integers), min/max, abs/neg, selp and slct on any type."""
    INT_MUL = "int_mul"
    """Integer multiply and multiply-add: mul/mad (lo, hi, wide), mul24/mad24,
    madc, sad, dp4a/dp2a."""
    INT_DIV = "int_div"
    """Integer div and rem (software sequences on NVIDIA GPUs)."""
    FP32 = "fp32"
    """Single precision add/sub/mul/fma/mad, min/max, abs/neg, compares (setp/set),
    testp, copysign."""
    FP32_DIV = "fp32_div"
    """IEEE single precision div.rn/rz/rm/rp, rcp.rn and sqrt.rn (software sequences)."""
    FP64 = "fp64"
    """Double precision arithmetic, min/max, compares."""
    FP64_DIV = "fp64_div"
    """Double precision div, rcp.rn and sqrt.rn."""
    FP16 = "fp16"
    """Half and bfloat16 arithmetic (f16, f16x2, bf16, bf16x2)."""
    SFU = "sfu"
    """Special function unit: sin, cos, ex2, lg2, tanh, rsqrt, rcp.approx,
    sqrt.approx, div.approx and div.full."""
    TENSOR = "tensor"
    """Matrix instructions: mma, wmma, wgmma, tcgen05."""
    CONVERSION = "conversion"
    """cvt (including cvt.pack and rounding to integral values) and cvta."""
    MOVE = "move"
    """mov of registers, immediates, special registers and symbol addresses."""
    LD_GLOBAL = "ld_global"
    """ld.global (including .nc) and ldu."""
    ST_GLOBAL = "st_global"
    """st.global."""
    LD_SHARED = "ld_shared"
    """ld.shared (any ``::`` sub-space) and ldmatrix."""
    ST_SHARED = "st_shared"
    """st.shared and stmatrix."""
    LD_LOCAL = "ld_local"
    """ld.local (register spills, local arrays, call frames)."""
    ST_LOCAL = "st_local"
    """st.local."""
    LD_CONST = "ld_const"
    """ld.const (constant bank loads)."""
    LD_PARAM = "ld_param"
    """ld.param (kernel parameters, call arguments and return values)."""
    ST_PARAM = "st_param"
    """st.param (call arguments and return values)."""
    LD_GENERIC = "ld_generic"
    """ld without a state space: generic addressing resolved at run time."""
    ST_GENERIC = "st_generic"
    """st without a state space."""
    TEXTURE = "texture"
    """tex, tld4, txq and the surface instructions (suld, sust, sured, suq)."""
    ATOMIC_GLOBAL = "atomic_global"
    """atom.global and red.global."""
    ATOMIC_SHARED = "atomic_shared"
    """atom.shared and red.shared."""
    ATOMIC_GENERIC = "atomic_generic"
    """atom and red without a state space."""
    BARRIER = "barrier"
    """Block-level synchronisation: bar, barrier (not bar.warp.sync), mbarrier."""
    FENCE = "fence"
    """Memory ordering: membar and fence."""
    BRANCH = "branch"
    """bra and brx."""
    WARP = "warp"
    """Warp-level collectives: shfl, vote, match, activemask, redux, elect,
    bar.warp.sync (``__syncwarp``)."""
    CONTROL = "control"
    """ret, exit, call, trap, brkpt."""
    OTHER = "other"
    """Everything else (prefetch, cp.async, nanosleep, createpolicy, isspacep...)."""

    def __str__(self) -> str:
        return self.value


_FIXED: dict[str, InstrClass] = {
    **dict.fromkeys(("bra", "brx"), InstrClass.BRANCH),
    **dict.fromkeys(("ret", "exit", "call", "trap", "brkpt"), InstrClass.CONTROL),
    **dict.fromkeys(("shfl", "vote", "match", "activemask", "redux", "elect"), InstrClass.WARP),
    **dict.fromkeys(("cvt", "cvta"), InstrClass.CONVERSION),
    "mov": InstrClass.MOVE,
    **dict.fromkeys(("tex", "tld4", "txq", "suld", "sust", "sured", "suq"), InstrClass.TEXTURE),
    **dict.fromkeys(("mma", "wmma", "wgmma", "tcgen05"), InstrClass.TENSOR),
    **dict.fromkeys(("membar", "fence"), InstrClass.FENCE),
    "mbarrier": InstrClass.BARRIER,
    **dict.fromkeys(("sin", "cos", "ex2", "lg2", "tanh", "rsqrt"), InstrClass.SFU),
    "ldmatrix": InstrClass.LD_SHARED,
    "stmatrix": InstrClass.ST_SHARED,
    **dict.fromkeys(("selp", "slct"), InstrClass.INT),
    "rem": InstrClass.INT_DIV,
}
_INT_OPS = frozenset("""add sub addc subc and or xor not cnot shl shr shf min max abs neg popc
clz brev bfe bfi bfind bmsk prmt lop3 szext setp set fns""".split())
_MUL_OPS = frozenset("mul mad mul24 mad24 madc sad dp4a dp2a".split())
_FLOAT_OPS = frozenset("add sub mul fma mad min max abs neg setp set testp copysign".split())
_LOADS = {"global": InstrClass.LD_GLOBAL, "shared": InstrClass.LD_SHARED,
          "local": InstrClass.LD_LOCAL, "const": InstrClass.LD_CONST,
          "param": InstrClass.LD_PARAM, None: InstrClass.LD_GENERIC}
_STORES = {"global": InstrClass.ST_GLOBAL, "shared": InstrClass.ST_SHARED,
           "local": InstrClass.ST_LOCAL, "param": InstrClass.ST_PARAM,
           None: InstrClass.ST_GENERIC}
_ATOMICS = {"global": InstrClass.ATOMIC_GLOBAL, "shared": InstrClass.ATOMIC_SHARED,
            None: InstrClass.ATOMIC_GENERIC}


def _float_kind(ptx_type: str | None) -> str | None:
    if ptx_type is None:
        return None
    if ptx_type in ("f32", "tf32"):
        return "f32"
    if ptx_type == "f64":
        return "f64"
    if ptx_type.startswith(("f16", "bf16")):
        return "f16"
    return None


def _memory(opcode: str, space: str | None) -> InstrClass | None:
    if opcode in ("ld", "ldu"):
        return _LOADS.get(space, InstrClass.OTHER)
    if opcode == "st":
        return _STORES.get(space, InstrClass.OTHER)
    if opcode in ("atom", "red"):
        return _ATOMICS.get(space, InstrClass.OTHER)
    return None


def _division(opcode: str, kind: str | None, approx: bool) -> InstrClass | None:
    if opcode not in ("div", "rcp", "sqrt"):
        return None
    if kind is None:
        return InstrClass.INT_DIV if opcode == "div" else InstrClass.OTHER
    if approx or kind == "f16":
        return InstrClass.SFU
    return InstrClass.FP64_DIV if kind == "f64" else InstrClass.FP32_DIV


def classify(opcode: str, types: tuple[str, ...], space: str | None,
             modifiers: tuple[str, ...], mode: str | None = None) -> InstrClass:
    """The class of an instruction from its decoded parts (see :class:`InstrClass`)."""
    memory = _memory(opcode, space)
    if memory is not None:
        return memory
    if opcode in ("bar", "barrier"):
        return InstrClass.WARP if mode == "warp" else InstrClass.BARRIER
    fixed = _FIXED.get(opcode)
    if fixed is not None:
        return fixed
    kind = _float_kind(types[-1] if types else None)
    division = _division(opcode, kind, "approx" in modifiers or "full" in modifiers)
    if division is not None:
        return division
    if kind is not None and opcode in _FLOAT_OPS:
        return {"f32": InstrClass.FP32, "f64": InstrClass.FP64, "f16": InstrClass.FP16}[kind]
    if opcode in _MUL_OPS:
        return InstrClass.INT_MUL
    if opcode in _INT_OPS:
        return InstrClass.INT
    return InstrClass.OTHER
