"""The PTX vocabulary: opcodes, types, modifiers, special registers.

Collected from the PTX ISA (up to version 9.0). The parser rejects an opcode or a
modifier outside these sets, so that a typo fails at parse time with a position
instead of deep inside the emulator; modifiers with a ``::`` sub-qualifier
(``.L2::cache_hint``, ``.shared::cta``) and shape modifiers (``.m16n8k16``,
``.x4``) are accepted by pattern.
"""

from __future__ import annotations

import re

__all__ = [
    "ATOMIC_OPS",
    "BOOL_OPS",
    "CACHE_OPS",
    "CMP_OPS",
    "OPCODES",
    "ROUNDING",
    "SCOPES",
    "SEMANTICS",
    "SPACES",
    "SPECIAL_REGISTERS",
    "TYPE_SIZES",
    "VECTOR_WIDTHS",
    "is_known_modifier",
    "is_special_register",
]

OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra
brev brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt
cvta discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep
istypep ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov
movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp
red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st
stackrestore stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05 tensormap
testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax
vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
""".split())

# Bytes per element; ``pred`` registers have no memory size (1 is used for layout).
TYPE_SIZES: dict[str, int] = {
    "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b128": 16,
    "u8": 1, "u16": 2, "u32": 4, "u64": 8,
    "s8": 1, "s16": 2, "s32": 4, "s64": 8,
    "f16": 2, "f16x2": 4, "bf16": 2, "bf16x2": 4, "tf32": 4, "f32": 4, "f64": 8,
    "e4m3": 1, "e5m2": 1, "e4m3x2": 2, "e5m2x2": 2, "e4m3x4": 4, "e5m2x4": 4,
    "e2m1": 1, "e2m1x2": 1, "e2m1x4": 2, "e2m3": 1, "e2m3x2": 2, "e3m2": 1, "e3m2x2": 2,
    "ue8m0": 1, "ue8m0x2": 2, "ue4m3": 1,
    "s16x2": 4, "u16x2": 4, "s4": 1, "u4": 1, "b1": 1, "s2": 1,
    "pred": 1, "texref": 8, "samplerref": 8, "surfref": 8,
}
# Types an instruction or a declaration may name (sub-byte ones only in mma).
TYPES = frozenset(TYPE_SIZES)

SPACES = frozenset(("global", "shared", "local", "const", "param", "tex", "generic"))
VECTOR_WIDTHS = {"v2": 2, "v4": 4, "v8": 8, "v16": 16}
ROUNDING = frozenset(("rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"))
CMP_OPS = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                     "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"))
BOOL_OPS = frozenset(("and", "or", "xor"))
CACHE_OPS = frozenset(("ca", "cg", "cs", "lu", "cv", "wb", "wt"))
ATOMIC_OPS = frozenset(("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
                        "popc"))
SEMANTICS = frozenset(("relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "weak",
                       "mmio"))
SCOPES = frozenset(("cta", "gpu", "sys", "cluster", "gl"))

# Sub-operation keywords, per opcode: stored as ``Instruction.mode``.
MODES: dict[str, frozenset[str]] = {
    "shfl": frozenset(("up", "down", "bfly", "idx")),
    "vote": frozenset(("all", "any", "uni", "ballot")),
    "match": frozenset(("any", "all")),
    "bar": frozenset(("sync", "arrive", "red", "warp")),
    "barrier": frozenset(("sync", "arrive", "red")),
    "prmt": frozenset(("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")),
    "shf": frozenset(("l", "r")),
    "testp": frozenset(("finite", "infinite", "number", "notanumber", "normal", "subnormal")),
    "membar": frozenset(("cta", "gl", "sys", "proxy")),
    "mbarrier": frozenset(("init", "inval", "arrive", "arrive_drop", "test_wait", "try_wait",
                           "pending_count", "expect_tx", "complete_tx")),
}

_OTHER_MODIFIERS = frozenset("""
sat ftz approx full wide hi lo uni sync aligned nc cc to relu satfinite NaN xorsign abs
shiftamt noftz trans num oob clamp wrap zero trap mode ballot arrive red popc warp noinc
async bulk tensor tile im2col commit_group wait_group wait_all expect_tx complete_tx
try_wait test_wait parity init inval arrive_drop pending_count mma_async fence proxy alias
tensormap collective alloc dealloc relinquish_alloc_permit ld st cp shift commit wait
pack unpack row col a b c d sp rz rn base level grad r g query width height depth
channel_data_type channel_order normalized_coords filter_mode addr_mode_0 addr_mode_1
addr_mode_2 force_unnormalized_coords array_size num_mipmap_levels num_samples samplerref
surfref texref 1d 2d 3d a1d a2d cube acube 2dms a2dms all any up down bfly idx f4e b4e
rc8 ecl ecr rc16 l finite infinite number notanumber normal subnormal init sc reuse
multicast noreturn ignore_oob zfill prefetch gather4 scatter4 unified preserve
read write readwrite exclusive shared_memory create discard evict_last evict_first
evict_normal evict_unchanged no_allocate fraction L1 L2 release_cta launch_dependents
wait_dependents try_cancel query_cancel is_canceled get_first_ctaid x y z v_mask
block_scale scale_vec scale_d ws kind dynamic pred load store mma p bulk_group
memory_layout fractional range wait_all sp noComplete reduce ld_reduce cp_fenceproxy
global_address global_dim global_stride element_stride elemtype interleave_layout
swizzle_mode swizzle_atomicity fill_mode box_dim replace tile_mode cta_group collector
expect ignore rn_satfinite release acquire op_restrict mbarrier_init unified_address
""".split())

_SHAPE = re.compile(r"(?:m\d+n\d+(?:k\d+)?|x\d+|b\d+x\d+(?:_p\d+)?|\d+x\d+b?|m\d+|n\d+"
                    r"|k\d+|warpx\d+|\d+d)\Z")

KNOWN_MODIFIERS = (TYPES | SPACES | frozenset(VECTOR_WIDTHS) | ROUNDING | CMP_OPS | BOOL_OPS
                   | CACHE_OPS | ATOMIC_OPS | SEMANTICS | SCOPES | _OTHER_MODIFIERS
                   | frozenset().union(*MODES.values()))


def is_known_modifier(modifier: str) -> bool:
    """Whether ``modifier`` (no leading dot) is part of PTX's vocabulary."""
    if modifier in KNOWN_MODIFIERS or "::" in modifier:
        return True
    return _SHAPE.match(modifier) is not None


_VECTOR_SREGS = frozenset(("%tid", "%ntid", "%ctaid", "%nctaid", "%clusterid", "%nclusterid",
                           "%cluster_ctaid", "%cluster_nctaid"))
_SCALAR_SREGS = frozenset("""
%laneid %warpid %nwarpid %smid %nsmid %gridid %clock %clock_hi %clock64 %lanemask_eq
%lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt %globaltimer %globaltimer_lo
%globaltimer_hi %total_smem_size %dynamic_smem_size %aggr_smem_size %is_explicit_cluster
%cluster_ctarank %cluster_nctarank %reserved_smem_offset_begin %reserved_smem_offset_end
%reserved_smem_offset_cap %current_graph_exec %reserved_smem_offset_0
%reserved_smem_offset_1
""".split())
_NUMBERED_SREG = re.compile(r"%(?:envreg(?:[12]?\d|3[01])|pm[0-7](?:_64)?)\Z")
SPECIAL_REGISTERS = _VECTOR_SREGS | _SCALAR_SREGS


def is_special_register(base: str, component: str | None) -> bool:
    """Whether ``base`` (``%tid``) with ``component`` (``x`` or None) names a special register."""
    if base in _VECTOR_SREGS:
        return component in (None, "x", "y", "z")
    if component is not None:
        return False
    return base in _SCALAR_SREGS or _NUMBERED_SREG.match(base) is not None


_CMP_OPCODES = frozenset(("setp", "set", "vset", "vset2", "vset4"))
_CACHE_OPCODES = frozenset(("ld", "st", "ldu", "prefetch", "cp"))
_ATOMIC_OPCODES = frozenset(("atom", "red", "redux", "bar", "barrier", "multimem"))
_NO_SPACE = frozenset(("membar",))


def decode_modifiers(opcode: str, modifiers: tuple[str, ...]) -> dict[str, object]:
    """The decoded fields of an instruction's modifiers (see ``Instruction``).

    Context decides between homonyms: ``.lo`` is a comparison in ``setp`` and a
    flag in ``mul``; ``.and`` a boolean operator in ``setp`` and an atomic
    operation in ``atom``. Modifiers that decode to no field go to ``flags``.
    """
    types: list[str] = []
    flags: list[str] = []
    out: dict[str, object] = {"space": None, "vector": 1, "rounding": None, "cmp": None,
                              "boolop": None, "cache": None, "atomic_op": None, "mode": None,
                              "sem": None, "scope": None}
    modes = MODES.get(opcode, ())
    for mod in modifiers:
        base = mod.partition("::")[0]
        if mod in TYPES:
            types.append(mod)
        elif base in SPACES and out["space"] is None and opcode not in _NO_SPACE:
            out["space"] = base
        elif mod in VECTOR_WIDTHS:
            out["vector"] = VECTOR_WIDTHS[mod]
        elif mod in ROUNDING:
            out["rounding"] = mod
        elif opcode in _CMP_OPCODES and mod in CMP_OPS and out["cmp"] is None:
            out["cmp"] = mod
        elif opcode in _CMP_OPCODES and mod in BOOL_OPS:
            out["boolop"] = mod
        elif opcode in _CACHE_OPCODES and mod in CACHE_OPS and out["cache"] is None:
            out["cache"] = mod
        elif mod in modes and out["mode"] is None:
            out["mode"] = mod
        elif opcode in _ATOMIC_OPCODES and mod in ATOMIC_OPS and out["atomic_op"] is None:
            out["atomic_op"] = mod
        elif mod in SEMANTICS:
            out["sem"] = mod
        elif mod in SCOPES:
            out["scope"] = mod
        else:
            flags.append(mod)
    out["types"] = tuple(types)
    out["flags"] = frozenset(flags)
    return out
