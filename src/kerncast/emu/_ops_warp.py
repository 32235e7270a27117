"""Warp collectives: shfl.sync, vote.sync, match.sync, activemask, redux.sync, elect.sync.

They run over the active lanes of every warp of the group at once: lanes are
grouped by warp (``lane >> 5``) and per-warp values come from ``bincount`` and
``ufunc.at`` reductions. Lanes outside ``membermask`` do not take part. A shuffle
that reads an inactive lane gets whatever that lane's register holds (PTX leaves
it undefined).
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._types import dtype_of
from kerncast.ptx import Instruction, RegPair, Sink

__all__ = ["HANDLERS", "warp_groups"]

_ONE = np.uint64(1)


def warp_groups(idx: np.ndarray):
    """(warp number relative to the first, lane in warp, number of warps)."""
    warp = idx >> 5
    first = int(warp[0]) if len(warp) else 0
    rel = warp - first
    return rel, (idx & 31), (int(rel[-1]) + 1 if len(rel) else 0)


def _member(mask_value, lane):
    mask = np.asarray(mask_value).astype(np.uint64)
    return ((mask >> lane.astype(np.uint64)) & _ONE).astype(bool)


def _bits_per_warp(rel, lane, keep, count):
    weights = np.where(keep, np.left_shift(1, lane.astype(np.int64)), 0).astype(np.float64)
    return np.bincount(rel, weights=weights, minlength=count).astype(np.uint64)


def _shfl(ctx: Ctx, frame, ins: Instruction, pc: int):
    mode = ins.mode
    ops = ins.operands
    dest = ops[0]
    dw = dest.first if isinstance(dest, RegPair) else dest
    pw = dest.second if isinstance(dest, RegPair) else None
    put = ctx.access.dst(frame, dw, "b32")[1]
    put_p = None if pw is None or isinstance(pw, Sink) else ctx.access.dst(frame, pw, "pred")[1]
    ga = ctx.access.src(frame, ops[1], "b32")
    gb = ctx.access.src(frame, ops[2], "u32")
    gc = ctx.access.src(frame, ops[3], "u32")

    def shfl(lanes):
        idx = lanes.idx
        lane = (idx & 31).astype(np.int64)
        b = np.asarray(gb(idx), np.int64) & 31
        c = np.asarray(gc(idx), np.int64)
        cval, seg = c & 31, (c >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        if mode == "up":
            j = lane - b
            ok = j >= max_lane
        elif mode == "down":
            j = lane + b
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = (lane & seg) | (b & ~seg)
            ok = j <= max_lane
        source = idx - lane + np.where(ok, j, lane)
        put(idx, ga(source))
        if put_p is not None:
            put_p(idx, np.broadcast_to(ok, idx.shape))
    if mode not in ("up", "down", "bfly", "idx"):
        raise unsupported(ins, "shuffle mode")
    return shfl


def _vote(ctx: Ctx, frame, ins: Instruction, pc: int):
    mode = ins.mode
    ops = ins.operands
    ga = ctx.access.src(frame, ops[1], "pred")
    gm = ctx.access.src(frame, ops[2], "u32") if len(ops) > 2 else (lambda sl: np.uint32(
        0xFFFFFFFF))
    ballot = mode == "ballot"
    put = ctx.access.dst(frame, ops[0], "b32" if ballot else "pred")[1]
    if mode not in ("all", "any", "uni", "ballot"):
        raise unsupported(ins, "vote mode")

    def vote(lanes):
        idx = lanes.idx
        rel, lane, count = warp_groups(idx)
        member = _member(gm(idx), lane)
        value = np.asarray(ga(idx), bool)
        yes = _bits_per_warp(rel, lane, member & value, count)
        if ballot:
            put(idx, yes[rel].astype(np.uint32))
            return
        present = _bits_per_warp(rel, lane, member, count)
        if mode == "all":
            result = yes == present
        elif mode == "any":
            result = yes != 0
        else:
            result = (yes == present) | (yes == 0)
        put(idx, result[rel])
    return vote


def _activemask(ctx: Ctx, frame, ins: Instruction, pc: int):
    put = ctx.access.dst(frame, ins.operands[0], "b32")[1]

    def activemask(lanes):
        idx = lanes.idx
        rel, lane, count = warp_groups(idx)
        bits = _bits_per_warp(rel, lane, np.ones(len(idx), bool), count)
        put(idx, bits[rel].astype(np.uint32))
    return activemask


def _match(ctx: Ctx, frame, ins: Instruction, pc: int):
    ptype = ins.type
    if ptype not in ("b32", "b64"):
        raise unsupported(ins, f"type .{ptype}")
    ops = ins.operands
    dest = ops[0]
    dw = dest.first if isinstance(dest, RegPair) else dest
    pw = dest.second if isinstance(dest, RegPair) else None
    put = ctx.access.dst(frame, dw, "b32")[1]
    put_p = None if pw is None or isinstance(pw, Sink) else ctx.access.dst(frame, pw, "pred")[1]
    ga = ctx.access.src(frame, ops[1], ptype)
    gm = ctx.access.src(frame, ops[2], "u32")
    mode = ins.mode

    def match(lanes):
        idx = lanes.idx
        rel, lane, count = warp_groups(idx)
        member = _member(gm(idx), lane)
        values = np.broadcast_to(np.asarray(ga(idx)).astype(np.uint64), idx.shape)
        keys = np.stack([rel.astype(np.uint64), values], axis=1)
        _, group = np.unique(keys, axis=0, return_inverse=True)
        group = group.reshape(-1)
        weights = np.where(member, np.left_shift(1, lane.astype(np.int64)), 0).astype(
            np.float64)
        same = np.bincount(group, weights=weights).astype(np.uint64)
        present = _bits_per_warp(rel, lane, member, count)
        if mode == "any":
            put(idx, same[group].astype(np.uint32))
            return
        everyone = same[group] == present[rel]
        put(idx, np.where(everyone, present[rel], 0).astype(np.uint32))
        if put_p is not None:
            put_p(idx, everyone)
    return match


def _redux(ctx: Ctx, frame, ins: Instruction, pc: int):
    op, ptype = ins.atomic_op, ins.type
    if ptype not in ("u32", "s32", "b32") or op not in ("add", "min", "max", "and", "or",
                                                       "xor"):
        raise unsupported(ins, f"redux .{op}.{ptype}")
    dt = dtype_of(ptype)
    ga = ctx.access.src(frame, ins.operands[1], ptype)
    gm = ctx.access.src(frame, ins.operands[2], "u32")
    put = ctx.access.dst(frame, ins.operands[0], ptype)[1]
    ufunc = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}.get(op)

    def redux(lanes):
        idx = lanes.idx
        rel, lane, count = warp_groups(idx)
        member = _member(gm(idx), lane)
        values = np.broadcast_to(np.asarray(ga(idx), dt), idx.shape)
        if op == "add":
            total = np.zeros(count, np.int64)
            np.add.at(total, rel[member], values[member].astype(np.int64))
            result = (total & 0xFFFFFFFF).astype(np.uint32).view(dt)
        else:
            ident = {"min": np.iinfo(dt).max, "max": np.iinfo(dt).min, "and": -1 if
                     dt.kind == "i" else np.iinfo(dt).max, "or": 0, "xor": 0}[op]
            result = np.full(count, ident, dt)
            ufunc.at(result, rel[member], values[member])
        put(idx, result[rel])
    return redux


def _elect(ctx: Ctx, frame, ins: Instruction, pc: int):
    ops = ins.operands
    dest = ops[0]
    dw = dest.first if isinstance(dest, RegPair) else dest
    pw = dest.second if isinstance(dest, RegPair) else None
    put = None if isinstance(dw, Sink) else ctx.access.dst(frame, dw, "b32")[1]
    put_p = None if pw is None or isinstance(pw, Sink) else ctx.access.dst(frame, pw, "pred")[1]
    gm = ctx.access.src(frame, ops[1], "u32")

    def elect(lanes):
        idx = lanes.idx
        rel, lane, count = warp_groups(idx)
        member = _member(gm(idx), lane)
        leader = np.full(count, 32, np.int64)
        np.minimum.at(leader, rel[member], lane[member].astype(np.int64))
        if put is not None:
            put(idx, leader[rel].astype(np.uint32))
        if put_p is not None:
            put_p(idx, lane == leader[rel])
    return elect


def _noop(ctx: Ctx, frame, ins: Instruction, pc: int):
    return lambda lanes: None


HANDLERS = {"shfl": _shfl, "vote": _vote, "activemask": _activemask, "match": _match,
            "redux": _redux, "elect": _elect, "membar": _noop, "fence": _noop,
            "nanosleep": _noop, "pmevent": _noop}
