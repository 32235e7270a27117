"""The event loop of one simulated round, compiled by Numba.

:class:`kerncast.sim._pipeline._Sim` lays a round out as flat arrays (the program's
table, the warps' streams, their memory requests, the caches' and the memory servers'
state) and :func:`run_round` issues every instruction of every warp over them, as the
module docstring of ``_pipeline`` describes; :class:`kerncast.sim._memory.SMCaches`
keeps its L1 and L2 in the same arrays (:func:`new_lru`) and calls :func:`cache_load`
and :func:`cache_store`. The loop runs once per issued instruction, which in plain
Python took half of a prediction.

Every function here is plain Python over NumPy arrays: :func:`compiled` gives them
compiled by Numba (cached on disk) where Numba is installed, and the plain ones where it
is not or where ``NUMBA_DISABLE_JIT`` is set, with the same results; :func:`for_round`
chooses between the two for a round.

Numbers follow the Python model's order of operations exactly, so that a prediction is
the same to the last bit whichever way it runs.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from types import FunctionType, ModuleType

import numpy as np

from kerncast.trace import KINDS, SECTOR, SPACES

__all__ = ["DRAM_CHUNK", "LRU", "bandwidth_transfer", "cache_load", "cache_store", "dram_added",
           "dram_pages", "dram_spread", "dram_transfer", "jit", "lru_size", "new_lru", "new_set",
           "partial_store_cycles", "reserve_set", "round_scratch", "set_add", "spread_rank",
           "run_round", "compiled", "for_round", "INTERPRETED"]

_INF = math.inf


#: the functions :func:`compiled` hands to Numba: name -> (function, inline into callers)
_PLAIN: dict[str, tuple[Callable, bool]] = {}
_COMPILED: list[ModuleType] = []
_LOCK = threading.Lock()


def jit(func=None, *, inline: bool = False):
    """Mark ``func`` for Numba (``inline``: into its callers, where a call's cost would be
    most of its own); :func:`compiled` compiles it."""
    if func is None:
        return lambda f: jit(f, inline=inline)
    _PLAIN[func.__name__] = (func, inline)
    return func


def compiled() -> ModuleType:
    """This module's functions, those :func:`jit` marks compiled by Numba in nopython
    mode and cached on disk: a namespace of its own, made at the first call (importing
    Numba takes 0.2 s, so it waits for the first prediction that needs it), that leaves
    the module's own functions plain Python; the module itself where Numba is missing or
    ``NUMBA_DISABLE_JIT`` is set."""
    with _LOCK:
        if not _COMPILED:
            _COMPILED.append(_compile(sys.modules[__name__]))
        return _COMPILED[0]


def _compile(module: ModuleType) -> ModuleType:
    try:
        import numba  # noqa: PLC0415 (on use: the compiler, 0.2 s to import)
    except ImportError:  # pragma: no cover (Numba is a dependency)
        return module
    if numba.config.DISABLE_JIT:
        return module
    space = ModuleType(module.__name__, module.__doc__)
    names = vars(space)
    names.update({k: v for k, v in vars(module).items() if k not in ("__name__", "__doc__")})
    names["borrow"] = _borrower()
    for name, (func, inline) in _PLAIN.items():
        # the same code over the namespace's names, so that it calls the compiled others
        twin = FunctionType(func.__code__, names, func.__name__, func.__defaults__,
                            func.__closure__)
        twin.__qualname__, twin.__module__ = func.__qualname__, func.__module__
        names[name] = numba.njit(cache=True, nogil=True,
                                 inline="always" if inline else "never")(twin)
    return space


#: instructions a process simulates with the loop interpreted before it compiles it: about
#: what importing Numba and loading the compiled loop cost (0.45 s, at the 10 µs an
#: instruction the interpreted loop takes). A one-off prediction of a small launch never
#: pays for the compiler; a sweep pays for both at most twice what the better would.
INTERPRETED = 40_000
_interpreted: list[int] = [0]


def for_round(instructions: int) -> ModuleType:
    """This module for a round of ``instructions``: interpreted while the process has
    simulated fewer than :data:`INTERPRETED` instructions in all, :func:`compiled` from
    then on (the same results either way)."""
    if not _COMPILED and _interpreted[0] + instructions <= INTERPRETED:
        _interpreted[0] += instructions
        return sys.modules[__name__]
    return compiled()


def _borrower():
    """``borrow(a)``: array ``a`` without its reference count, for the compiled loop to
    pass on freely. Numba counts references to an array at each call that takes it,
    with atomic operations that cost more than the LRU and heap steps themselves (60 ns
    where the step takes 4). Only arrays that the caller holds for the whole call are
    borrowed, never one made inside and never one returned."""
    from numba.core import cgutils  # noqa: PLC0415 (on use: with the compiler)
    from numba.extending import intrinsic  # noqa: PLC0415 (on use: with the compiler)

    @intrinsic
    def borrow(typingctx, array):
        def codegen(context, builder, signature, args):
            source = context.make_array(signature.args[0])(context, builder, value=args[0])
            out = context.make_array(signature.return_type)(context, builder)
            for name in ("nitems", "itemsize", "data", "shape", "strides", "parent"):
                setattr(out, name, getattr(source, name))
            out.meminfo = cgutils.get_null_value(out.meminfo.type)
            return out._getvalue()
        return array(array), codegen
    return borrow


def borrow(array):
    """``array`` itself; the compiled functions borrow it (:func:`_borrower`)."""
    return array


# ---------------------------------------------------------------------------------------
# Hash tables of int64 keys in arrays: open addressing with linear probing, at most half
# full, erased by shifting the entries after a hole back (no tombstones). ``hk`` the
# keys, ``hv`` a value per bucket (-1: empty).

def _buckets(entries: int) -> int:
    return 1 << max(4, int(2 * max(entries, 1) - 1).bit_length())


@jit(inline=True)
def _home(key, mask):
    """A key's first bucket: its bits folded to 31 and spread by a multiply (neighbouring
    sectors land far apart, so that the runs linear probing scans stay short)."""
    folded = (key ^ (key >> 31) ^ (key >> 47)) & 0x7FFFFFFF
    return ((folded * 0x5BD1E995) >> 16) & mask


@jit(inline=True)
def _find(hk, hv, mask, key):
    """The bucket of ``key``, or -(the empty bucket where it would go) - 1."""
    i = _home(key, mask)
    while hv[i] >= 0:
        if hk[i] == key:
            return i
        i = (i + 1) & mask
    return -i - 1


@jit(inline=True)
def _erase(hk, hv, mask, i):
    """Empty bucket ``i``, moving back the entries after it that may fill it."""
    j = i
    while True:
        j = (j + 1) & mask
        if hv[j] < 0:
            break
        h = _home(hk[j], mask)
        if (j > i and (h <= i or h > j)) or (j < i and h <= i and h > j):
            hk[i] = hk[j]
            hv[i] = hv[j]
            i = j
    hv[i] = -1


# Sets of int64 (the pages a warm L2 has translated): (hk, hv, meta: [entries, mask]),
# grown from Python (:func:`reserve_set`) ahead of the insertions a run can make.

def new_set(entries: int = 0) -> tuple:
    buckets = _buckets(entries)
    return (np.zeros(buckets, np.int64), np.full(buckets, -1, np.int64),
            np.array([0, buckets - 1], np.int64))


def reserve_set(table: tuple, more: int) -> tuple:
    """``table``, or a larger copy of it, with room for ``more`` further entries."""
    hk, hv, meta = table
    if 2 * (int(meta[0]) + more) <= len(hk):
        return table
    grown = new_set(int(meta[0]) + more)
    for key in hk[hv >= 0].tolist():
        set_add(grown, key)
    return grown


@jit(inline=True)
def _borrow_set(table):
    return borrow(table[0]), borrow(table[1]), borrow(table[2])


@jit(inline=True)
def set_add(table, key):
    """Add ``key``; whether it was new."""
    hk, hv, meta = table
    b = _find(hk, hv, meta[1], key)
    if b >= 0:
        return False
    hk[-b - 1] = key
    hv[-b - 1] = 1
    meta[0] += 1
    return True


# Least recently used sets of sectors: a hash table from sector to slot and, per slot,
# its sector, a value and the slots before and after it in age order (oldest first).
# meta: [oldest slot, newest slot, entries, slots ever used, free slots stacked, mask].

LRU = tuple  # (hk, hv, keys, values, prev, nxt, meta, free)


def new_lru(capacity: int) -> LRU:
    """An empty LRU of ``capacity`` sectors."""
    cap = max(int(capacity), 1)
    buckets = _buckets(cap)
    return (np.zeros(buckets, np.int64), np.full(buckets, -1, np.int64),
            np.empty(cap, np.int64), np.empty(cap, np.float64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.array([-1, -1, 0, 0, 0, buckets - 1], np.int64),
            np.empty(cap, np.int64))


def lru_size(lru: LRU) -> int:
    return int(lru[6][2])


@jit(inline=True)
def _borrow_lru(lru):
    return (borrow(lru[0]), borrow(lru[1]), borrow(lru[2]), borrow(lru[3]), borrow(lru[4]),
            borrow(lru[5]), borrow(lru[6]), borrow(lru[7]))


@jit(inline=True)
def _slot(lru, key):
    """The slot of ``key``, -1 where absent."""
    b = _find(lru[0], lru[1], lru[6][5], key)
    return lru[1][b] if b >= 0 else -1


@jit(inline=True)
def _lru_unlink(lru, slot):
    prev, nxt, meta = lru[4], lru[5], lru[6]
    p, n = prev[slot], nxt[slot]
    if p >= 0:
        nxt[p] = n
    else:
        meta[0] = n
    if n >= 0:
        prev[n] = p
    else:
        meta[1] = p


@jit(inline=True)
def _lru_append(lru, slot):
    prev, nxt, meta = lru[4], lru[5], lru[6]
    prev[slot] = meta[1]
    nxt[slot] = -1
    if meta[1] >= 0:
        nxt[meta[1]] = slot
    else:
        meta[0] = slot
    meta[1] = slot


@jit(inline=True)
def _lru_touch(lru, slot):
    """Make ``slot`` the newest."""
    if lru[6][1] != slot:
        _lru_unlink(lru, slot)
        _lru_append(lru, slot)


@jit
def _lru_insert(lru, key, value):
    """Add ``key`` (not present) as the newest, evicting the oldest when full."""
    hk, hv, keys, values, meta, free = lru[0], lru[1], lru[2], lru[3], lru[6], lru[7]
    mask = meta[5]
    if meta[2] >= keys.shape[0]:
        slot = meta[0]
        _lru_unlink(lru, slot)
        _erase(hk, hv, mask, _find(hk, hv, mask, keys[slot]))
        meta[2] -= 1
    elif meta[4] > 0:
        meta[4] -= 1
        slot = free[meta[4]]
    else:
        slot = meta[3]
        meta[3] += 1
    keys[slot] = key
    values[slot] = value
    b = -_find(hk, hv, mask, key) - 1
    hk[b] = key
    hv[b] = slot
    _lru_append(lru, slot)
    meta[2] += 1


@jit
def _lru_drop(lru, key):
    """Remove ``key`` where present."""
    hk, hv, meta, free = lru[0], lru[1], lru[6], lru[7]
    b = _find(hk, hv, meta[5], key)
    if b < 0:
        return
    slot = hv[b]
    _erase(hk, hv, meta[5], b)
    _lru_unlink(lru, slot)
    free[meta[4]] = slot
    meta[4] += 1
    meta[2] -= 1


# ---------------------------------------------------------------------------------------
# The SM's caches (kerncast.sim._memory.SMCaches): stats is [L1 hits, L2 hits, sectors]
# and dram [expected DRAM sectors].

# DRAM access granularity (bytes): a global constant of the memory model, documented and
# evaluated with cross-validation by kernel in benchmarks/static_accuracy.py.
DRAM_CHUNK = 64
_PER_CHUNK = DRAM_CHUNK // SECTOR
# the GPU's 2 MiB pages, in 32-byte sectors (log2)
_PAGE_SECTORS_LOG2 = 16


#: the low bits of a sector number that a replica's private shift leaves alone (the shift
#: is a multiple of 2**46 sectors: ``kerncast.sim._sharing._PRIVATE``)
_OWN_SECTOR = (1 << 46) - 1


@jit(inline=True)
def _warm(warm, s):
    """Whether sector ``s`` (or the sector a replica's private copy stands for) lies in one
    of the ``warm`` ranges ([first, end) sector rows): the L2 holds it at the start."""
    own = s & _OWN_SECTOR
    for k in range(warm.shape[0]):
        if warm[k, 0] <= own < warm[k, 1]:
            return True
    return False


@jit
def cache_load(l1, l2, pages, warm, stats, dram_stat, sectors, lo, hi, share, now,
               l1_lat, l2_lat, dram_lat, chunks):
    """(time the data arrives, sectors fetched below L1, expected DRAM sectors) of a
    load of ``sectors[lo:hi]``; see ``SMCaches.load``. ``chunks``: room for ``hi - lo``
    DRAM chunks. A sector in a ``warm`` range misses only into the L2, which holds it,
    its first access to each page waiting for the page's translation."""
    l1, l2, pages = _borrow_lru(l1), _borrow_lru(l2), _borrow_set(pages)
    stats, dram_stat, sectors, chunks = (borrow(stats), borrow(dram_stat), borrow(sectors),
                                         borrow(chunks))
    ready = now + l1_lat
    below = 0
    dram = 0.0
    l1_hits = 0
    l2_hits = 0
    from_dram = now + l2_lat + share * (dram_lat - l2_lat)
    n_chunks = 0
    l1_values = l1[3]
    for k in range(lo, hi):
        s = sectors[k]
        slot = _slot(l1, s)
        if slot >= 0:
            arrival = l1_values[slot]
            _lru_touch(l1, slot)
            l1_hits += 1
            if arrival > ready:
                ready = arrival
            continue
        below += 1
        slot = _slot(l2, s)
        if slot >= 0:
            _lru_touch(l2, slot)
            l2_hits += 1
            arrival = now + l2_lat
        elif warm.shape[0] and _warm(warm, s):
            _lru_insert(l2, s, 0.0)
            l2_hits += 1
            arrival = now + l2_lat
            if set_add(pages, s >> _PAGE_SECTORS_LOG2):
                arrival = now + dram_lat
        else:
            _lru_insert(l2, s, 0.0)
            chunk = s // _PER_CHUNK
            seen = False
            for c in range(n_chunks):
                if chunks[c] == chunk:
                    seen = True
                    break
            if not seen:
                chunks[n_chunks] = chunk
                n_chunks += 1
                dram += share * _PER_CHUNK
                for buddy in range(chunk * _PER_CHUNK, (chunk + 1) * _PER_CHUNK):
                    if buddy == s:
                        continue
                    other = _slot(l2, buddy)
                    if other >= 0:
                        _lru_touch(l2, other)
                    else:
                        _lru_insert(l2, buddy, 0.0)
            arrival = from_dram
        _lru_insert(l1, s, arrival)
        if arrival > ready:
            ready = arrival
    stats[0] += l1_hits
    stats[1] += l2_hits
    stats[2] += hi - lo
    dram_stat[0] += dram
    return ready, below, dram


@jit
def cache_store(l1, l2, warm, dram_stat, sectors, lo, hi):
    """(sectors written to L2, expected DRAM sectors) of a store of ``sectors[lo:hi]``;
    see ``SMCaches.store``. An L2 sector's value says whether it is dirty (1) or clean
    (0, as loads bring sectors in): a sector's first write is written back to DRAM once,
    whether the L2 held it (a load's, updated in place) or not; a sector in a ``warm``
    range stays in the L2 past the launch, and is written back after it."""
    l1, l2 = _borrow_lru(l1), _borrow_lru(l2)
    dram_stat, sectors = borrow(dram_stat), borrow(sectors)
    dirty = l2[3]
    dram = 0.0
    for k in range(lo, hi):
        s = sectors[k]
        _lru_drop(l1, s)
        back = 0.0 if warm.shape[0] and _warm(warm, s) else 1.0
        slot = _slot(l2, s)
        if slot >= 0:
            _lru_touch(l2, slot)
            if dirty[slot] == 0.0:
                dirty[slot] = 1.0
                dram += back
            continue
        _lru_insert(l2, s, 1.0)
        dram += back
    dram_stat[0] += dram
    return hi - lo, dram


# ---------------------------------------------------------------------------------------
# Memory servers. bw (the L2's share): [free, per_byte, busy, bytes]. The DRAM's share:
# [free, per_byte, busy, bytes, read, write, turn, written, window, recent, seen], its
# loaded-latency curve (load_x, load_y; empty where it has none) and the spread of single
# reads' latencies (as order statistics by DRAM pages and rank; empty where the
# calibration has none).

@jit(inline=True)
def _interp(xs, ys, x):
    if x <= xs[0]:
        return ys[0]
    n = xs.shape[0]
    if x >= xs[n - 1]:
        return ys[n - 1]
    k = np.searchsorted(xs, x, side="right")
    return ys[k - 1] + (x - xs[k - 1]) / (xs[k] - xs[k - 1]) * (ys[k] - ys[k - 1])


@jit
def partial_store_cycles(xs, ys, sectors, piece):
    """Cycles the SM's store path takes for ``sectors`` sectors that each receive
    ``piece`` bytes, at the calibrated rate of such stores (``ys`` sectors a cycle at
    ``xs`` bytes, interpolated in the piece size)."""
    return sectors / _interp(xs, ys, piece)


@jit(inline=True)
def bandwidth_transfer(bw, now, nbytes):
    hold = nbytes * bw[1]
    start = bw[0] if bw[0] > now else now
    bw[0] = start + hold
    bw[2] += hold
    bw[3] += nbytes
    return bw[0] - now


@jit
def dram_transfer(dram, load_x, now, nbytes, store):
    if store:
        dram[7] += nbytes
    f = dram[7] / (dram[3] + nbytes)
    dram[1] = (1 - f) * dram[4] + f * dram[5] + 4 * f * (1 - f) * dram[6]
    if load_x.shape[0] > 0:
        if now > dram[10]:
            dram[9] *= math.exp((dram[10] - now) / dram[8])
            dram[10] = now
        dram[9] += nbytes * dram[1]
    return bandwidth_transfer(dram, now, nbytes)


@jit
def dram_added(dram, load_x, load_y):
    if load_x.shape[0] == 0:
        return 0.0
    return _interp(load_x, load_y, dram[9] / dram[8])


@jit(inline=True)
def spread_rank(warp, read, size):
    """The rank among its block's ``size`` warps that warp ``warp`` (its index in the
    block) takes at its stream's place ``read``: its index moved on by 7 a place (11 in a
    block of a multiple of 7 warps), so that at each place the block's warps hold every
    rank once and each warp takes every rank in turn."""
    step = 7 if size % 7 else 11
    return (warp + step * read) % size


#: sectors of a DRAM page (1 KiB, an HBM pseudo-channel's row): the lines of one request
#: within a page arrive together, those in different pages as draws of their own
#: (tools/multiline_latency_probe.py on the H200: a warp's read of 2, 4 or 8 adjacent
#: lines at light load takes 697-759 cycles, as one line's 709-811; of as many lines 170
#: MB apart, 754-956, about the latest of as many one-line draws)
PAGE_SECTORS = 32


@jit(inline=True)
def dram_pages(sectors, lo, hi):
    """DRAM pages among a request's sectors ``sectors[lo:hi]`` (ascending)."""
    count = 0
    last = -1
    for k in range(lo, hi):
        page = sectors[k] // PAGE_SECTORS
        if page != last:
            count += 1
            last = page
    return count


@jit
def dram_spread(order, pages, rank):
    """Cycles a DRAM read lies off the mean latency: the expected ``rank``-th order
    statistic of its block's warps' reads (``order``: per DRAM pages of the request, from
    one, and per rank, see :func:`kerncast.sim._pipeline.order_statistics`); 0 where the
    calibration has no spread."""
    if order.shape[0] == 0:
        return 0.0
    return order[min(pages, order.shape[0]) - 1, rank]


# ---------------------------------------------------------------------------------------
# Binary heaps of (time, warp), one row per scheduler, ordered as Python orders tuples.

@jit(inline=True)
def _less(ht, hw, a, b):
    return ht[a] < ht[b] or (ht[a] == ht[b] and hw[a] < hw[b])


@jit(inline=True)
def _raised(ht, hw, child, parent):
    """Swap ``child`` above ``parent`` where it comes first; whether it did."""
    if not _less(ht, hw, child, parent):
        return False
    ht[child], ht[parent] = ht[parent], ht[child]
    hw[child], hw[parent] = hw[parent], hw[child]
    return True


@jit
def _sift_down(ht, hw, n, i):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _less(ht, hw, c + 1, c):
            c += 1
        if not _raised(ht, hw, c, i):
            return
        i = c


@jit(inline=True)
def _push(ht, hw, hn, k, t, w):
    i = hn[k]
    hn[k] += 1
    row_t, row_w = ht[k], hw[k]
    row_t[i] = t
    row_w[i] = w
    while i > 0 and _raised(row_t, row_w, i, (i - 1) // 2):
        i = (i - 1) // 2


@jit(inline=True)
def _pop(ht, hw, hn, k):
    row_t, row_w = ht[k], hw[k]
    t, w = row_t[0], row_w[0]
    hn[k] -= 1
    n = hn[k]
    if n > 0:
        row_t[0] = row_t[n]
        row_w[0] = row_w[n]
        _sift_down(row_t, row_w, n, 0)
    return t, w


@jit(inline=True)
def _replace(ht, hw, hn, k, t, w):
    row_t, row_w = ht[k], hw[k]
    row_t[0] = t
    row_w[0] = w
    _sift_down(row_t, row_w, hn[k], 0)


# ---------------------------------------------------------------------------------------
# The round. Op fields by pc: kind, pipe, issue, slots, latency, shadow; sources,
# destinations and the other pipes held ("also") as (ptr, values) pairs. Streams: every
# traced warp's pcs and steps, concatenated (ptr), and per position the memory request
# it makes (an index into the request arrays, -1 for none). Warp w issues stream w % one.

_K_MEM, _K_BAR = 1, 2
_GLOBAL, _SHARED, _LOCAL, _CONST = (SPACES.index(s) for s in ("global", "shared", "local",
                                                               "const"))
_STORE, _ATOMIC = KINDS.index("store"), KINDS.index("atomic")


@jit
def _memory(cost, offset, now, r_kind, r_space, r_lines, r_waves, r_share, r_nbytes,
            r_traffic, sec_ptr, sec_idx, buf, chunks, lat, l1, l2c, pages, warm, stats,
            dram_stat, dram, load_x, load_y, spread, warp, read, size, l2, store_x,
            store_y, scattered):
    """(latency the warp sees, cycles the load/store path is held) of request ``cost``,
    made by warp ``warp`` of a block of ``size`` at its stream's place ``read``."""
    if cost < 0:  # predicated off in every lane: issued, nothing moves
        return 1.0, lat[6]
    space = r_space[cost]
    if space == _CONST:
        return 20.0, 1.0
    if space == _SHARED:
        return lat[3] + r_waves[cost] - 1, r_waves[cost] * lat[5]
    if space != _GLOBAL and space != _LOCAL:
        return 4.0, 1.0
    hold = float(max(1, r_lines[cost]))
    lo, hi = sec_ptr[cost], sec_ptr[cost + 1]
    sectors = sec_idx
    if offset != 0:  # a replica's own sectors
        for k in range(lo, hi):
            buf[k - lo] = sec_idx[k] + offset
        sectors, hi, lo = buf, hi - lo, 0
    n = hi - lo
    kind = r_kind[cost]
    if kind == _ATOMIC:
        delay = bandwidth_transfer(l2, now, 32.0 * n)
        return lat[4] + delay, hold
    traffic = r_traffic[cost]
    if kind == _STORE:
        if store_x.shape[0] > 0 and r_lines[cost] == n and n >= scattered \
                and r_nbytes[cost] < 32 * n and traffic == 1.0:
            hold = max(hold, partial_store_cycles(store_x, store_y, n, r_nbytes[cost] / n))
        below, to_dram = cache_store(l1, l2c, warm, dram_stat, sectors, lo, hi)
        bandwidth_transfer(l2, now, 32.0 * below * traffic)
        if to_dram:
            dram_transfer(dram, load_x, now, 32.0 * to_dram, True)
        return 1.0, hold
    ready, below, to_dram = cache_load(l1, l2c, pages, warm, stats, dram_stat, sectors, lo,
                                       hi, r_share[cost], now, lat[0], lat[1], lat[2],
                                       chunks)
    delay = 0.0
    if below:
        delay = bandwidth_transfer(l2, now, 32.0 * below * traffic)
    if to_dram:
        moved = dram_transfer(dram, load_x, now, 32.0 * to_dram * traffic, False)
        added = dram_added(dram, load_x, load_y)
        # the request's place in the spread, as far as its data comes from DRAM: the
        # latest of its pages
        delay = max(delay, moved, added) + r_share[cost] * dram_spread(
            spread, max(1, dram_pages(sectors, lo, hi)), spread_rank(warp, read, size))
    return ready - now + delay, hold


@jit
def _release(b, arr_w, arr_t, arr_n, ht, hw, hn, sched_of, bar_cost, totals):
    n = arr_n[b]
    if n == 0:
        return
    go = arr_t[b, 0]
    for k in range(1, n):
        if arr_t[b, k] > go:
            go = arr_t[b, k]
    go += bar_cost
    for k in range(n):
        w = arr_w[b, k]
        totals[0] += go - arr_t[b, k]
        _push(ht, hw, hn, sched_of[w], go, w)
    arr_n[b] = 0


def round_scratch(n: int, nregs: int, n_sched: int, n_pipes: int, n_blocks: int, wpb: int,
                  widest: int) -> tuple:
    """The arrays :func:`run_round` works in, for ``n`` warps of ``nregs`` registers on
    ``n_sched`` schedulers, ``n_blocks`` blocks of ``wpb`` warps and requests of at most
    ``widest`` sectors. Its results are read from them after the run: ``finish`` (index
    5), ``marked`` (6), ``sm_marked`` (7), ``busy`` (4) and ``totals`` (8: barrier wait,
    instructions issued, the cycle the load/store path frees)."""
    f, i = np.float64, np.int64
    return (np.zeros(n, i), np.zeros((n, max(nregs, 1)), f), np.zeros(n_sched, f),
            np.zeros((n_sched, n_pipes), f), np.zeros(n_pipes, f), np.zeros(n, f),
            np.zeros((n, 2), f), np.zeros(2, f), np.zeros(3, f), np.zeros(n_blocks, i),
            np.zeros((n_blocks, wpb), i), np.zeros((n_blocks, wpb), f), np.zeros(n_blocks, i),
            np.zeros(n_blocks, i), np.zeros((n_sched, n + 1), f), np.zeros((n_sched, n + 1), i),
            np.zeros(n_sched, i), np.zeros((n_sched, n + 1), f), np.zeros((n_sched, n + 1), i),
            np.zeros(n_sched, i), np.full(n_sched, -1, i), np.zeros(n_sched, f),
            np.zeros(n_sched, f), np.zeros(max(widest, 1), i), np.zeros(max(widest, 1), i))


@jit
def run_round(scratch, o_kind, o_late, o_pipe, o_issue, o_slots, o_lat, o_shadow,
              src_ptr, src_idx, dst_ptr, dst_idx, also_ptr, also_pipe, also_held,
              s_ptr, s_pcs, s_steps, s_cost, s_redirect, one, n, sched_of, block_of, bw_ptr,
              bw_idx, next_in_slot, n_blocks,
              r_kind, r_space, r_lines, r_waves, r_share, r_nbytes, r_traffic,
              sec_ptr, sec_idx, s_off, scattered, fp64_shadow,
              l1, l2c, pages, warm, stats, dram_stat,
              dram, load_x, load_y, spread, l2, store_x, store_y,
              lat, nregs, n_sched, lsu, timing, marks, sm_marks):
    """Issue every warp's stream, in the arrays of :func:`round_scratch` (``scratch``)."""
    (pos, ready, sched_free, pipe_free, busy, finish, marked, sm_marked, totals, live,
     arr_w, arr_t, arr_n, arr_seq, ht, hw, hn, pt, pw, pn, armed, first, credit, buf,
     chunks) = scratch
    pos, ready, sched_free, pipe_free = borrow(pos), borrow(ready), borrow(sched_free), \
        borrow(pipe_free)
    busy, finish, marked, sm_marked = borrow(busy), borrow(finish), borrow(marked), \
        borrow(sm_marked)
    totals, live, arr_w, arr_t = borrow(totals), borrow(live), borrow(arr_w), borrow(arr_t)
    arr_n, arr_seq, ht, hw, hn = borrow(arr_n), borrow(arr_seq), borrow(ht), borrow(hw), \
        borrow(hn)
    pt, pw, pn, armed, first = borrow(pt), borrow(pw), borrow(pn), borrow(armed), \
        borrow(first)
    credit, buf, chunks = borrow(credit), borrow(buf), borrow(chunks)
    o_kind, o_pipe, o_issue, o_slots = borrow(o_kind), borrow(o_pipe), borrow(o_issue), \
        borrow(o_slots)
    o_late, s_redirect = borrow(o_late), borrow(s_redirect)
    o_lat, o_shadow, src_ptr, src_idx = borrow(o_lat), borrow(o_shadow), borrow(src_ptr), \
        borrow(src_idx)
    dst_ptr, dst_idx, also_ptr, also_pipe = borrow(dst_ptr), borrow(dst_idx), \
        borrow(also_ptr), borrow(also_pipe)
    also_held, s_ptr, s_pcs, s_steps = borrow(also_held), borrow(s_ptr), borrow(s_pcs), \
        borrow(s_steps)
    s_cost, sched_of, block_of, bw_ptr = borrow(s_cost), borrow(sched_of), \
        borrow(block_of), borrow(bw_ptr)
    bw_idx, r_kind, r_space, r_lines = borrow(bw_idx), borrow(r_kind), borrow(r_space), \
        borrow(r_lines)
    r_waves, r_share, r_nbytes, r_traffic = borrow(r_waves), borrow(r_share), \
        borrow(r_nbytes), borrow(r_traffic)
    sec_ptr, sec_idx, s_off = borrow(sec_ptr), borrow(sec_idx), borrow(s_off)
    l1, l2c, pages = _borrow_lru(l1), _borrow_lru(l2c), _borrow_set(pages)
    stats, dram_stat, dram, load_x = borrow(stats), borrow(dram_stat), borrow(dram), \
        borrow(load_x)
    load_y, l2, store_x, store_y = borrow(load_y), borrow(l2), borrow(store_x), \
        borrow(store_y)
    spread = borrow(spread)
    wpb = arr_w.shape[1]  # a warp's rank in the spread is among its block's warps
    lat, timing, marks, sm_marks = borrow(lat), borrow(timing), borrow(marks), \
        borrow(sm_marks)
    dispatch_gap, turnaround, bar_cost = timing[0], timing[1], timing[2]
    for w in range(n):
        live[block_of[w]] += 1
    seq = 0
    streamed = s_pcs.shape[0]
    for w in range(one):
        _push(ht, hw, hn, sched_of[w], 0.0, w)
    lsu_free = 0.0
    issued = 0
    sm_first, sm_last = sm_marks[0], sm_marks[1]
    dispatch_free = 0.0
    for k in range(n_sched):
        first[k] = (ht[k, 0] if ht[k, 0] > sched_free[k] else sched_free[k]) \
            if hn[k] > 0 else _INF
    while True:
        s = 0
        now = first[0]
        for k in range(1, n_sched):
            if first[k] < now:
                now, s = first[k], k
        if now == _INF:
            any_parked = False
            for k in range(n_sched):
                if pn[k] > 0:
                    any_parked = True
                    t, wk = _pop(pt, pw, pn, k)
                    armed[k] = wk
                    _push(ht, hw, hn, k, max(t, lsu_free), wk)
            if not any_parked:
                waiting = 0
                for b in range(n_blocks):
                    if arr_n[b] > 0:
                        waiting += 1
                if waiting == 0:
                    break
                # the emulator ran these: release, in the order they began to wait
                for _ in range(waiting):
                    b = -1
                    for c in range(n_blocks):
                        if arr_n[c] > 0 and (b < 0 or arr_seq[c] < arr_seq[b]):
                            b = c
                    _release(b, arr_w, arr_t, arr_n, ht, hw, hn, sched_of, bar_cost, totals)
            for k in range(n_sched):
                first[k] = (ht[k, 0] if ht[k, 0] > sched_free[k] else sched_free[k]) \
                    if hn[k] > 0 else _INF
            continue
        t = ht[s, 0]
        w = hw[s, 0]
        i = pos[w]
        st = w % one
        base = s_ptr[st]
        if i >= s_ptr[st + 1] - base:
            _pop(ht, hw, hn, s)
            # the warp ends: the last of its results lands
            end = t
            for r in range(nregs):
                if ready[w, r] > end:
                    end = ready[w, r]
            finish[w] = end
            b = block_of[w]
            live[b] -= 1
            if live[b] == 0 and b + next_in_slot < n_blocks:
                # the slot's next block starts the calibrated turnaround later, once the
                # block scheduler gets to it (one block every dispatch_gap cycles)
                start = max(t + turnaround, dispatch_free)
                dispatch_free = start + dispatch_gap
                nb = b + next_in_slot
                for j in range(bw_ptr[nb], bw_ptr[nb + 1]):
                    v = bw_idx[j]
                    _push(ht, hw, hn, sched_of[v], start, v)
            if arr_n[b] > 0 and arr_n[b] >= live[b]:
                _release(b, arr_w, arr_t, arr_n, ht, hw, hn, sched_of, bar_cost, totals)
            for k in range(n_sched):
                first[k] = (ht[k, 0] if ht[k, 0] > sched_free[k] else sched_free[k]) \
                    if hn[k] > 0 else _INF
            continue
        pc = s_pcs[base + i]
        kind = o_kind[pc]
        pipe = o_pipe[pc]
        start = pipe_free[s, pipe]
        if start < now:
            start = now
        for j in range(also_ptr[pc], also_ptr[pc + 1]):
            if pipe_free[s, also_pipe[j]] > start:
                start = pipe_free[s, also_pipe[j]]
        late = o_late[pc]
        for j in range(src_ptr[pc], src_ptr[pc + 1]):
            if ready[w, src_idx[j]] + late > start:
                start = ready[w, src_idx[j]] + late
        if kind == _K_MEM and lsu_free > start:
            if armed[s] < 0 or armed[s] == w:
                armed[s] = w
                _replace(ht, hw, hn, s, lsu_free, w)
            else:
                _pop(ht, hw, hn, s)
                _push(pt, pw, pn, s, start, w)
            first[s] = (ht[s, 0] if ht[s, 0] > sched_free[s] else sched_free[s]) \
                if hn[s] > 0 else _INF
            continue
        if start > now:
            _replace(ht, hw, hn, s, start, w)
            t = ht[s, 0]
            first[s] = t if t > sched_free[s] else sched_free[s]
            continue
        shadow = o_shadow[pc]
        if shadow:
            # the FP64 pipe's cycles past the slots hold the scheduler, but for the
            # whole cycles its shadow credit has earned: those another warp can take
            c = credit[s] + fp64_shadow * shadow
            granted = min(shadow, float(int(c)))
            credit[s] = c - granted
            sched_free[s] = now + o_slots[pc] + shadow - granted
        else:
            sched_free[s] = now + o_slots[pc]
        issue = o_issue[pc]
        pipe_free[s, pipe] = now + issue
        busy[pipe] += issue
        for j in range(also_ptr[pc], also_ptr[pc + 1]):
            pipe_free[s, also_pipe[j]] = now + also_held[j]
            busy[also_pipe[j]] += also_held[j]
        pos[w] = i + 1
        if i == marks[w, 0] or i == marks[w, 1]:
            marked[w, 1 if i == marks[w, 1] else 0] = now
        issued += 1
        if issued == sm_first or issued == sm_last:
            sm_marked[1 if issued == sm_last else 0] = now
        if kind == _K_MEM:
            at = base + i
            offset = s_off[(w // one) * streamed + at] if s_off.shape[0] else 0
            latency, hold = _memory(s_cost[at], offset, now, r_kind, r_space, r_lines,
                                    r_waves, r_share, r_nbytes, r_traffic, sec_ptr, sec_idx,
                                    buf, chunks, lat, l1, l2c, pages, warm, stats, dram_stat,
                                    dram, load_x, load_y, spread, st % wpb, i, wpb, l2,
                                    store_x, store_y, scattered)
            lsu_free = now + hold
            if armed[s] == w:
                armed[s] = -1
                if pn[s] > 0:  # queued after w: w stays first
                    tp, wk = _pop(pt, pw, pn, s)
                    armed[s] = wk
                    _push(ht, hw, hn, s, max(tp, lsu_free), wk)
            busy[lsu] += hold - issue
            for j in range(dst_ptr[pc], dst_ptr[pc + 1]):
                ready[w, dst_idx[j]] = now + latency
        elif kind == _K_BAR:
            _pop(ht, hw, hn, s)
            b = block_of[w]
            if arr_n[b] == 0:
                arr_seq[b] = seq
                seq += 1
            arr_w[b, arr_n[b]] = w
            arr_t[b, arr_n[b]] = now + 1.0
            arr_n[b] += 1
            if arr_n[b] >= live[b]:
                _release(b, arr_w, arr_t, arr_n, ht, hw, hn, sched_of, bar_cost, totals)
            for k in range(n_sched):
                first[k] = (ht[k, 0] if ht[k, 0] > sched_free[k] else sched_free[k]) \
                    if hn[k] > 0 else _INF
            continue
        else:
            done = now + o_lat[pc]
            for j in range(dst_ptr[pc], dst_ptr[pc + 1]):
                ready[w, dst_idx[j]] = done
        # the next cycle, or past a taken branch the fetch of its target
        redirect = s_redirect[base + i]
        _replace(ht, hw, hn, s, now + (redirect if redirect > 0.0 else 1.0), w)
        t = ht[s, 0]
        first[s] = t if t > sched_free[s] else sched_free[s]
    totals[1] = issued
    totals[2] = lsu_free

