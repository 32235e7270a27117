"""How global addresses move from block to block, and how many blocks of a wave share them.

One SM's round shows only its own blocks' addresses, but the L2 serves every SM: data
that many blocks read (a matrix row every block of a grid row multiplies with, the
bodies every n-body tile reads) is fetched from DRAM once and then hit in the L2 by
the others. For every global memory instruction *instance* (the ``k``-th execution
of pc ``p`` by warp ``w`` of a block, keyed ``(w, p, k)``):

* the predictor emulates *probe* blocks one step along each grid dimension from block
  0; an instance whose lanes access the same pattern shifted by ``dx, dy, dz`` bytes
  in the probes is *affine in the block index*; the round's other emulated blocks
  check ``a(b) = a(0) + bx*dx + by*dy + bz*dz`` (a contradiction makes it private);
* over the blocks of a wave (the first ``Psat x N_SM`` blocks) the distinct shifts of
  an affine instance, in 32-byte sectors, are the distinct fetches the L2 sees; the
  share of block-instances that go to DRAM is ``distinct / blocks``. If the wave's
  footprint fits in the L2, data shared with later waves stays there too and the
  count runs over the whole grid;
* instances that are not affine count as private (every block fetches its own), unless
  they read a buffer that fits in the L2 (a gathered vector, a lookup table): then the
  whole GPU shares it, and :func:`resident_shares` gives the share of fetches that find
  a sector no SM has brought in yet;
* a launch whose buffers stay in the L2 from one repeated launch to the next
  (:func:`warm_l2`, ``Sharing.warm``) fetches nothing from DRAM at all, whatever these
  shares say (:class:`kerncast.sim._memory.SMCaches`); nor does a launch read the
  buffers the protocol copies back before it, where the L2 still holds them
  (:func:`restored_warm`, ``Sharing.restored``);
* :meth:`Sharing.shift` gives the sector shift of an instance in another block, so
  that a round can stand for several blocks with one traced block (replicas).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from kerncast.core import MAX_INPUT_SETS, cycled_copies
from kerncast.trace import KINDS, SPACES

__all__ = ["Sharing", "block_coords", "instance_table", "probe_blocks", "resident_shares",
           "wave_sharing"]

_GLOBAL = SPACES.index("global")
_MULT = (np.arange(32, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
_PRIVATE = 1 << 46  # sector offset that keeps a replica's private data apart
# Share of the L2 that holds reusable data (the rest churns with streaming data): a
# global constant of the memory model, evaluated with cross-validation by kernel.
L2_USABLE = 0.8


def pair_order(minor: np.ndarray, major: np.ndarray) -> np.ndarray | None:
    """``np.lexsort((minor, major))``, or ``None`` where the pairs are already in that
    order (a stable sort of sorted pairs is the identity): traced accesses come in
    request order, and a coalesced request's lanes in address order."""
    if len(major) < 2:
        return None
    step = major[1:] != major[:-1]
    if (major[1:] >= major[:-1]).all() and (step | (minor[1:] >= minor[:-1])).all():
        return None
    return np.lexsort((minor, major))


_WIB_SHIFT, _PC_SHIFT = 44, 24  # instance key: warp in block | pc | occurrence


def _key(wib, pc, occ):
    return (np.asarray(wib, np.int64) << _WIB_SHIFT) | (np.asarray(pc, np.int64) << _PC_SHIFT) | \
        np.asarray(occ, np.int64)


@dataclass(frozen=True)
class Sharing:
    """DRAM share and block-to-block shift of every global instance of block 0."""

    keys: np.ndarray          # sorted instance keys
    fractions: np.ndarray     # DRAM share per key
    shifts: np.ndarray        # [n, 3] byte shift per grid dimension (0 where not affine)
    affine_mask: np.ndarray   # bool per key
    grid: tuple[int, ...]
    wave_footprint_bytes: float
    scope: str                # "wave" or "grid": how far shared data stays in L2
    resident: dict = field(default_factory=dict)  # pc -> DRAM share (resident_shares)
    warm: bool = False        # the buffers are in the L2 when the launch starts (warm_l2)
    # sector ranges of the buffers copied back before each launch, held by the L2 when it
    # starts (restored_warm)
    restored: np.ndarray = field(default_factory=lambda: NONE_WARM)
    _lookup: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def affine(self) -> int:
        return int(self.affine_mask.sum())

    @property
    def instances(self) -> int:
        return len(self.keys)

    def _row(self, key: tuple[int, int, int]) -> int:
        if not self._lookup and len(self.keys):
            self._lookup.update(zip(self.keys.tolist(), range(len(self.keys))))
        wib, pc, occ = key
        return self._lookup.get((int(wib) << _WIB_SHIFT) | (int(pc) << _PC_SHIFT) | int(occ), -1)

    def fraction(self, key: tuple[int, int, int]) -> float:
        """DRAM share of first fetches of an instance ``(warp in block, pc, occurrence)``."""
        row = self._row(key)
        if row >= 0 and self.affine_mask[row]:
            return float(self.fractions[row])
        return float(self.resident.get(key[1], 1.0))

    def fractions_of(self, wib: np.ndarray, pc: np.ndarray, occ: np.ndarray) -> list[float]:
        """:meth:`fraction` of many instances at once (arrays of their three parts)."""
        if not self._lookup and len(self.keys):
            self._lookup.update(zip(self.keys.tolist(), range(len(self.keys))))
        lookup, resident = self._lookup, self.resident
        affine, fractions = self.affine_mask.tolist(), self.fractions.tolist()
        out = []
        for key, p in zip(_key(wib, pc, occ).tolist(), np.asarray(pc).tolist()):
            row = lookup.get(key, -1)
            out.append(float(fractions[row]) if row >= 0 and affine[row] else
                       float(resident.get(p, 1.0)))
        return out

    def shift(self, key: tuple[int, int, int], block: int, source: int = 0) -> int:
        """Sectors to add to block ``source``'s sectors of this instance to get
        ``block``'s (private data of different blocks is kept apart): :meth:`shifts_of`
        of one request."""
        return int(self.shifts_of(np.array([key]), np.array([block]), np.array([source]))[0])

    def shifts_of(self, instances: np.ndarray, blocks: np.ndarray,
                  sources: np.ndarray) -> np.ndarray:
        """:meth:`shift` of many requests at once: ``instances`` their (warp in block, pc,
        occurrence) rows, ``blocks`` and ``sources`` theirs; as int64 (a private shift
        past 2**63 wraps, as :meth:`shift`'s value does modulo 2**64)."""
        blocks, sources = np.asarray(blocks, np.int64), np.asarray(sources, np.int64)
        inst = np.asarray(instances, np.int64).reshape(-1, 3)
        keys = _key(inst[:, 0], inst[:, 1], inst[:, 2])
        row = np.searchsorted(self.keys, keys)
        row = np.minimum(row, max(len(self.keys) - 1, 0))
        found = (self.keys[row] == keys) if len(self.keys) else np.zeros(len(keys), bool)
        affine = found & (self.affine_mask[row] if len(self.keys) else found)
        d = np.where(affine[:, None], self.shifts[row] if len(self.keys)
                     else np.zeros((len(keys), 3), np.int64), 0)
        gx, gy = self._plane

        def at(b: np.ndarray) -> np.ndarray:
            return (b % gx) * d[:, 0] + (b // gx) % gy * d[:, 1] + b // (gx * gy) * d[:, 2]
        with np.errstate(over="ignore"):
            out = np.where(affine, (at(blocks) >> 5) - (at(sources) >> 5),
                           blocks * np.int64(_PRIVATE))
        return np.where(blocks == sources, 0, out)

    @cached_property
    def _plane(self) -> tuple[int, int]:
        gx, gy = (list(self.grid) + [1, 1])[:2]
        return int(gx), int(gy)


def block_coords(blocks: np.ndarray, grid: tuple[int, ...]) -> np.ndarray:
    """``[n, 3]`` coordinates of linear block indices (x fastest)."""
    gx, gy, _ = (list(grid) + [1, 1, 1])[:3]
    blocks = np.asarray(blocks, np.int64)
    return np.stack([blocks % gx, (blocks // gx) % gy, blocks // (gx * gy)], axis=1)


def probe_blocks(grid: tuple[int, ...], anchor: int = 0) -> list[int]:
    """Block ``anchor``'s next neighbours along each grid dimension that has more than
    one block, where they lie in the grid without wrapping to another row or plane."""
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    x, y, z = block_coords(np.array([anchor]), grid)[0].tolist()
    return [anchor + step for step, at, n in ((1, x, gx), (gx, y, gy), (gx * gy, z, gz))
            if n > 1 and at + 1 < n]


def instance_table(acc, wpb: int) -> dict[str, np.ndarray]:
    """Per global request: block, instance key, first-lane address, lane mask, pattern."""
    keep = acc.space == _GLOBAL
    req, warp, pc = acc.request[keep], acc.warp[keep], acc.pc[keep]
    if not len(req):
        return {}
    lane, addr = acc.lane[keep].astype(np.int64), acc.address[keep].astype(np.uint64)
    if len(req) > 1 and not (req[1:] >= req[:-1]).all():
        order = np.argsort(req, kind="stable")
        req, warp, pc, lane, addr = req[order], warp[order], pc[order], lane[order], addr[order]
    starts = np.flatnonzero(np.r_[True, req[1:] != req[:-1]])
    base = np.minimum.reduceat(addr, starts)
    rel = addr - np.repeat(base, np.diff(np.r_[starts, len(req)]))
    pattern = np.add.reduceat(rel * _MULT[lane], starts)
    mask = np.bitwise_or.reduceat(np.left_shift(np.int64(1), lane), starts)
    sector = (addr >> np.uint64(5)).astype(np.int64)
    # lanes are in lane order within a request, so equal sectors need not be adjacent;
    # count distinct sectors by sorting within each request
    order2 = pair_order(sector, req)
    s2, r2 = (sector, req) if order2 is None else (sector[order2], req[order2])
    distinct = np.r_[True, (r2[1:] != r2[:-1]) | (s2[1:] != s2[:-1])]
    sectors = np.add.reduceat(distinct.astype(np.int64),
                              np.flatnonzero(np.r_[True, r2[1:] != r2[:-1]]))
    w, p = warp[starts], pc[starts]
    group = w * (1 << 24) + p
    ranking = np.lexsort((req[starts], group))
    sorted_group = group[ranking]
    first = np.r_[True, sorted_group[1:] != sorted_group[:-1]]
    begin = np.maximum.accumulate(np.where(first, np.arange(len(w)), 0))
    occ = np.empty(len(w), np.int64)
    occ[ranking] = np.arange(len(w)) - begin
    return {"block": w // wpb, "key": _key(w % wpb, p, occ), "base": base.astype(np.int64),
            "mask": mask, "pattern": pattern, "sectors": sectors}


def _of_block(inst: dict, block: int) -> dict[str, np.ndarray]:
    pick = inst["block"] == block
    order = np.argsort(inst["key"][pick])
    return {name: inst[name][pick][order]
            for name in ("key", "base", "mask", "pattern", "sectors")}


def _match(base: dict, other: dict) -> tuple[np.ndarray, np.ndarray]:
    """For each base key: does ``other`` have it with the same lanes and pattern, and the
    address shift."""
    pos = np.searchsorted(other["key"], base["key"])
    pos = np.minimum(pos, max(len(other["key"]) - 1, 0))
    if not len(other["key"]):
        return np.zeros(len(base["key"]), bool), np.zeros(len(base["key"]), np.int64)
    same = (other["key"][pos] == base["key"]) & (other["mask"][pos] == base["mask"]) & \
        (other["pattern"][pos] == base["pattern"])
    return same, other["base"][pos] - base["base"]


def sector_offsets(row: np.ndarray, grid: tuple[int, ...], n: int) -> np.ndarray:
    """``(block_coords(b) @ row) >> 5`` for the first ``n`` blocks ``b`` of ``grid``, in
    block order: the sums of one term per dimension, broadcast over the grid's rows and
    planes (no coordinates are built)."""
    gx, gy, _ = (list(grid) + [1, 1, 1])[:3]
    x = np.arange(min(gx, n), dtype=np.int64) * int(row[0])
    rows = -(-n // gx)
    if rows <= gy:
        y = np.arange(rows, dtype=np.int64) * int(row[1])
        return ((y[:, None] + x[None, :]).reshape(-1)[:n]) >> 5
    y = np.arange(gy, dtype=np.int64) * int(row[1])
    z = np.arange(-(-n // (gx * gy)), dtype=np.int64) * int(row[2])
    return ((z[:, None, None] + y[None, :, None] + x[None, None, :]).reshape(-1)[:n]) >> 5


def _distinct(shifts: np.ndarray, grid: tuple[int, ...], n: int) -> np.ndarray:
    """Distinct sector offsets over the first ``n`` blocks of ``grid`` for each row of
    ``shifts`` (unique rows)."""
    out = np.zeros(len(shifts), np.int64)
    for i, row in enumerate(shifts):
        out[i] = np.unique(sector_offsets(row, grid, n)).size
    return out


def _fetches(shifts: np.ndarray, grid: tuple[int, ...], n: int, reach: float) -> np.ndarray:
    """For each row of ``shifts``: the share of the first ``n`` blocks of ``grid`` that
    fetch an instance's data from DRAM: the first block to touch a sector, and every
    block whose previous toucher of that sector ran more than ``reach`` blocks earlier
    (the data has left the L2). A stable sort by sector keeps each sector's blocks in
    launch order."""
    out = np.zeros(len(shifts))
    for i, row in enumerate(shifts):
        offset = sector_offsets(row, grid, n)
        blk = np.argsort(offset, kind="stable")
        off = offset[blk]
        first = np.r_[True, off[1:] != off[:-1]]
        gap = np.r_[0, np.diff(blk)]
        out[i] = np.count_nonzero(first | (gap > reach)) / n
    return out


def wave_sharing(traces, grid: tuple[int, ...], probes: list[int], checks: list[int], *,
                 wave: int, total_blocks: int, l2_bytes: float, anchor: int = 0) -> Sharing:
    """DRAM share and shifts of every global instance of block ``anchor`` (module
    docstring; a run of the grid's blocks that starts past block 0 has its own).

    ``probes`` are the neighbour blocks one step along a dimension each (as
    :func:`probe_blocks` returns them), ``checks`` other emulated blocks that test the
    affine claim.
    """
    tables = [instance_table(t.memory, t.warps_per_block) for t in
              (traces if isinstance(traces, (list, tuple)) else [traces])]
    tables = [t for t in tables if t]
    inst = {k: np.concatenate([t[k] for t in tables]) for k in tables[0]} if tables else {}
    empty = np.zeros(0, np.int64)
    if not inst:
        return Sharing(empty, empty.astype(float), np.zeros((0, 3), np.int64), empty.astype(bool),
                       tuple(grid), 0.0, "wave")
    base = _of_block(inst, anchor)
    n = len(base["key"])
    shifts = np.zeros((n, 3), np.int64)
    affine = np.ones(n, bool)
    origin = block_coords(np.array([anchor]), grid)[0]
    for probe in probes:
        step = block_coords(np.array([probe]), grid)[0] - origin
        if sorted(step.tolist()) != [0, 0, 1]:
            continue  # not one step along one dimension
        same, delta = _match(base, _of_block(inst, probe))
        affine &= same
        shifts[:, int(np.argmax(step))] = delta
    for block in checks:
        if block in (anchor, *probes):
            continue
        other = _of_block(inst, block)
        same, delta = _match(base, other)
        coords = block_coords(np.array([block]), grid)[0] - origin
        predicted = shifts @ coords
        present = np.isin(base["key"], other["key"])
        affine &= ~present | (same & (delta == predicted))
    shifts[~affine] = 0
    wave_blocks = min(wave, total_blocks)
    grid_blocks = min(total_blocks, 1 << 20)  # the first million blocks show the reuse pattern
    unique, inverse = np.unique(shifts, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    wave_u = _distinct(unique, grid, wave_blocks)[inverse]
    footprint = float((base["sectors"] * np.where(affine, wave_u, wave_blocks)).sum()) * 32.0
    # the L2 keeps the data of about this many blocks (each block's own footprint)
    per_block = max(float(base["sectors"].sum()) * 32.0, 32.0)
    reach = L2_USABLE * l2_bytes / per_block
    share = _fetches(unique, grid, grid_blocks, reach)[inverse]
    fractions = np.where(affine, share, 1.0)
    scope = "grid" if footprint <= L2_USABLE * l2_bytes else "wave"
    return Sharing(base["key"], fractions, shifts, affine, tuple(grid), footprint, scope)


#: The ground truth's protocol (``kerncast.measure``'s ``times``): launches repeated
#: back to back over at most this many copies of their buffers (:func:`cycled_copies`).
INPUT_SETS = MAX_INPUT_SETS


#: warm sector ranges ([first, end) rows): every sector, none
ALL_WARM = np.array([[0, 1 << 46]], np.int64)
NONE_WARM = np.zeros((0, 2), np.int64)


def restored_warm(regions, restored: set[str], l2_bytes: float) -> np.ndarray:
    """Sector ranges ([first, end) rows) of the buffers the ``times`` protocol copies back
    to their first contents before every timed launch (``inout`` ones, and a user's
    arrays of no stated intent; :mod:`kerncast.measure._run`) where the L2 still holds
    them when the launch starts: the copies read a pristine copy of each and write it,
    then the launch reads the rest of its buffers, and all of that fits in the L2's
    usable share. ``regions`` are the emulated buffers (``name``, ``base``, ``nbytes``),
    ``restored`` the names of those copied back."""
    back = [r for r in regions if r.name in restored and r.nbytes > 0]
    copied = sum(r.nbytes for r in back)
    footprint = sum(r.nbytes for r in regions)
    if not back or copied + footprint > L2_USABLE * l2_bytes:
        return NONE_WARM
    return np.array([[r.base >> 5, (r.base + r.nbytes + 31) >> 5] for r in back], np.int64)


def warm_l2(footprint: float, l2_bytes: float) -> bool:
    """Whether a launch's buffers (``footprint`` bytes) are in the L2 when it starts, as
    the ``times`` protocol repeats it: every copy of the buffers it cycles through fits
    in the L2's usable share, so no launch's data has been evicted since its copy last
    ran."""
    if footprint <= 0:
        return False
    return cycled_copies(footprint, l2_bytes, INPUT_SETS) * footprint <= L2_USABLE * l2_bytes


def resident_shares(acc, regions, *, scale: float, l2_bytes: float) -> dict[int, float]:
    """DRAM share of the global loads (per pc) that read a buffer small enough to stay in
    the L2 while the whole grid runs.

    ``regions`` are the emulated buffers (objects with ``base`` and ``nbytes``), ``scale``
    turns the traced accesses into the whole grid's. ``N`` sector fetches spread over a
    buffer of ``S`` sectors touch ``S (1 - exp(-N / S))`` distinct sectors: those come
    from DRAM, the rest hit in the L2. A pass that streams through its buffer
    (:func:`_streams`) touches ``min(N, S)``. A pc reading a buffer larger than the L2's
    usable share is not listed (its fetches are private).
    """
    keep = (acc.space == _GLOBAL) & (acc.kind == KINDS.index("load"))
    if not keep.any() or not regions:
        return {}
    bases = np.array([r.base for r in regions], np.int64)
    sizes = np.array([r.nbytes for r in regions], np.int64)
    order = np.argsort(bases)
    bases, sizes = bases[order], sizes[order]
    address = acc.address[keep].astype(np.int64)
    which = np.searchsorted(bases, address, side="right") - 1
    inside = (which >= 0) & (address < bases[np.maximum(which, 0)] + sizes[np.maximum(which, 0)])
    req, pc = acc.request[keep][inside].astype(np.int64), acc.pc[keep][inside]
    which, sector = which[inside], address[inside] >> 5
    # one fetch per request and sector
    order = pair_order(sector, req)  # stable: each pair's first access leads its run
    if order is None:
        order = np.arange(len(req))
    r_sorted, s_sorted = req[order], sector[order]
    first = order[np.r_[True, (r_sorted[1:] != r_sorted[:-1]) | (s_sorted[1:] != s_sorted[:-1])]]
    fetches = np.bincount(which[first], minlength=len(bases)).astype(float)
    streams = _streams(req[first], pc[first], which[first], sector[first])
    out = {}
    pairs = np.unique((pc.astype(np.int64) << 20) | which)
    for p, r in zip((pairs >> 20).tolist(), (pairs & ((1 << 20) - 1)).tolist()):
        sectors = sizes[r] / 32.0
        n = fetches[r] * scale
        if sizes[r] > L2_USABLE * l2_bytes or n <= 0:
            continue
        if (p, r) in streams:  # every fetch a sector of its own, as far as the buffer goes
            out[p] = float(min(1.0, sectors / n))
        else:
            out[p] = float(min(1.0, sectors * -np.expm1(-n / sectors) / n))
    return out


def _streams(req: np.ndarray, pc: np.ndarray, which: np.ndarray,
             sector: np.ndarray) -> set[tuple[int, int]]:
    """The (pc, buffer) pairs whose traced fetches (one per request and sector) stream
    through their buffer: the only load of the buffer, its requests each a contiguous run
    of sectors, and no sector fetched twice. Such a pass reads each sector once, where
    draws at random (a gathered vector, a table every block reads) repeat sectors."""
    found = set()
    for r in np.unique(which).tolist():
        mine = which == r
        pcs = np.unique(pc[mine])
        if len(pcs) != 1:
            continue
        s, q = sector[mine], req[mine]
        if len(np.unique(s)) != len(s):
            continue
        ids, inverse = np.unique(q, return_inverse=True)
        low = np.full(len(ids), np.iinfo(np.int64).max)
        high = np.full(len(ids), np.iinfo(np.int64).min)
        np.minimum.at(low, inverse, s)
        np.maximum.at(high, inverse, s)
        if (high - low + 1 == np.bincount(inverse, minlength=len(ids))).all():
            found.add((int(pcs[0]), r))
    return found
