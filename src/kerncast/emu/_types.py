"""PTX types as NumPy dtypes, and immediates converted to them.

Registers are stored in the NumPy dtype of their declared type; an instruction whose
type differs reads and writes them through a ``.view`` of the same size (the view is
made once, at translation time). Types NumPy lacks are kept as raw bits: ``bf16`` as
``uint16``, ``f16x2``/``bf16x2`` as ``uint32``.
"""

from __future__ import annotations

import struct

import numpy as np

from kerncast.ptx import Imm

__all__ = [
    "DTYPES", "bits_dtype", "dtype_of", "imm_scalar", "int_dtype", "is_float", "is_signed",
    "size_of",
]

DTYPES: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "bf16": np.dtype(np.uint16), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.uint32), "s16x2": np.dtype(np.uint32), "u16x2": np.dtype(np.uint32),
    "b128": np.dtype(np.uint64),
}
_SIZES = {"pred": 1, "b128": 16}
_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}
_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
           8: np.dtype(np.int64)}


def dtype_of(ptx_type: str) -> np.dtype:
    """The NumPy dtype holding one value of a PTX type (``s32`` -> int32)."""
    return DTYPES[ptx_type]


def size_of(ptx_type: str) -> int:
    """Bytes of a PTX type (``pred`` counts 1)."""
    return _SIZES.get(ptx_type) or DTYPES[ptx_type].itemsize


def is_signed(ptx_type: str) -> bool:
    return ptx_type[0] == "s" and ptx_type not in ("s16x2",)


def is_float(ptx_type: str) -> bool:
    return ptx_type in ("f16", "f32", "f64")


def int_dtype(size: int, signed: bool = False) -> np.dtype:
    """The integer dtype of ``size`` bytes."""
    return (_SIGNED if signed else _UNSIGNED)[size]


def bits_dtype(dtype: np.dtype) -> np.dtype:
    """The unsigned integer dtype with the same size as ``dtype``."""
    return _UNSIGNED[np.dtype(dtype).itemsize]


def _float_bits(imm: Imm, size: int) -> int:
    """Bit pattern of a float immediate at ``size`` bytes (4 or 8 or 2)."""
    value = float(imm.value)
    if size == 8:
        if imm.kind == "f64" and imm.bits is not None:
            return imm.bits
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if size == 4:
        if imm.kind == "f32" and imm.bits is not None:
            return imm.bits
        return int(np.float32(value).view(np.uint32))
    return int(np.float16(value).view(np.uint16))


def imm_scalar(imm: Imm, ptx_type: str):
    """An immediate as a NumPy scalar of ``ptx_type``.

    Integers wrap to the type's width; float literals (``0f``/``0d``) keep their
    bits when the sizes agree and are converted by value otherwise; an integer
    literal in a float instruction is converted by value.
    """
    dtype = dtype_of(ptx_type)
    if ptx_type == "pred":
        return np.bool_(bool(imm.value))
    size = dtype.itemsize
    if dtype.kind == "f":
        if imm.is_float:
            bits = _float_bits(imm, size)
            return np.array([bits], dtype=_UNSIGNED[size]).view(dtype)[0]
        return dtype.type(int(imm.value))
    if imm.is_float:
        if imm.kind == "f32" and size == 4 or imm.kind == "f64" and size == 8:
            raw = _float_bits(imm, size)
        else:
            raw = _float_bits(imm, size) if size in (2, 4, 8) else int(imm.value)
    else:
        raw = int(imm.value)
    raw &= (1 << (8 * size)) - 1
    return np.array([raw], dtype=_UNSIGNED[size]).view(dtype)[0]
