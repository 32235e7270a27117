"""Executed SASS instructions from the emulated PTX stream and the real SASS.

ptxas assembles the emulated module (:func:`kerncast.trace._sasscode.assemble`,
``-lineinfo``), so every SASS instruction names the PTX line it came from. The
count of a SASS basic block is then derived from the PTX execution counts of the
emulated launch in four steps:

1. *Anchor.* A block runs as often as the PTX instructions it was assembled from:
   the median warp-level count of the PTX lines of its anchor instructions. Those
   are unpredicated (predicated ones come from if-converted branches and run less
   often in PTX) and carry a line of their own (a ``BSYNC`` at a join point only
   inherits the line of the code before its label); memory accesses and barriers
   first, as ptxas does not move them across branches, else anything but what
   ptxas places or rematerialises freely (constant and special-register reads,
   moves, ``BSSY``, exits duplicated into branches). Inside a SASS loop only lines
   of its PTX loop count. The median ignores the odd instruction hoisted or sunk.
2. *Loops.* A SASS loop belongs to the PTX loop of the PTX branch its back edge
   was assembled from. A SASS loop body or straight block that holds ``k`` copies
   of a PTX loop's body (the median, over the loop's memory and floating-point
   instructions that map to one SASS instruction each, of how many SASS memory or
   floating-point instructions carry each line) runs ``k`` PTX iterations at a
   time. Per entry of the PTX loop (every warp's trip count, from the emulator's
   streams) the iterations are dealt out greedily, as ptxas's unrolled code does:
   the largest unrolled loop runs ``trip // k`` times, straight copies once each
   if enough iterations remain, the rest falls to the remainder loop. Straight
   blocks of a PTX loop that hold no copy of its body (set-up and remainder
   tests) run once per entry; one that only leads into an unrolled loop, once
   per entry that runs it. This covers ptxas's unrolling (main loop, two-copy
   step, remainder loop), peeled iterations and full unrolling.
3. *Joins.* A ``BSYNC`` alone at a join point is issued by every path that
   arrives there: the warps that run the code after it, plus the extra paths that
   the divergent branches of its ``BSSY`` region made (``Trace.splits``, shared
   among the SASS copies of a PTX branch).
4. *Count.* The estimate is the sum over reachable blocks of the kernel and of the
   subroutines it calls of count times block size. Predicated-off instructions,
   warp-aggregated atomics, local arrays kept in registers and division sequences
   are in the real code, so they need no model.

Counts are warp-level and, like the emulator, follow each divergent path
separately. What the mapping cannot see: branches ptxas adds that have no PTX
counterpart decided by data (slow paths of division and square root are taken as
never run), loop copies whose iteration split depends on more than the trip
count (a loop ptxas versioned on alignment, say), and divergence where ptxas
reconverges elsewhere than the PTX's immediate post-dominator.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SassMapping", "map_sass", "printed_module"]

_ONE_TO_ONE_MEMORY = frozenset(("ld", "ldu", "st", "atom", "red"))
_ONE_TO_ONE_FLOAT = frozenset(("fma", "add", "sub", "mul"))
_SPACES = frozenset(("global", "shared", None))
_FIXED = frozenset(("LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "ATOM", "ATOMG",
                    "ATOMS", "RED", "REDG", "REDS", "BAR", "SHFL", "VOTE", "MATCH"))
_MOVABLE = frozenset(("LDC", "ULDC", "S2R", "S2UR", "CS2R", "MOV", "UMOV", "BSSY", "BSYNC",
                      "NOP", "HFMA2.MMA", "EXIT", "RET"))
_SASS_MEMORY = frozenset(("LDG", "STG", "LDS", "STS", "LD", "ST", "ATOM", "ATOMG", "ATOMS",
                          "RED", "REDG", "REDS", "LDSM"))
_SASS_FLOAT = frozenset(("FFMA", "FADD", "FMUL", "DFMA", "DADD", "DMUL", "HFMA2", "HADD2",
                         "HMUL2", "FFMA32I", "FADD32I", "FMUL32I"))


@dataclass
class SassMapping:
    """Result of :func:`map_sass`: ``total`` executed warp instructions; ``blocks``
    lists ``(function, block index, count, size)``; ``by_opcode`` the executed
    instructions per SASS mnemonic; ``loops`` describes each PTX loop ptxas
    unrolled (copies per SASS region and entries)."""

    total: float
    blocks: list[tuple[str, int, float, int]] = field(default_factory=list)
    by_opcode: dict[str, float] = field(default_factory=dict)
    loops: list[dict] = field(default_factory=list)


# -- the PTX side -------------------------------------------------------------------


def printed_text(module) -> str:
    """The module's PTX text without debug locations, as ptxas assembles it here."""
    from kerncast.ptx import to_ptx

    return to_ptx(dataclasses.replace(module, files={}))


_PRINTED: dict[int, tuple] = {}
_LOC = re.compile(r"^\s*\.loc\s", re.MULTILINE)


def printed_module(module) -> tuple[str, dict[int, int]]:
    """The PTX text to assemble for the module and, for every instruction (by ``id``),
    its line in that text; the last few modules' are kept. That is the text the module
    was parsed from where it has no debug locations and no two instructions share a line
    (what NVRTC, nvcc and clang write), else :func:`printed_text`."""
    kept = _PRINTED.get(id(module))
    if kept is not None and kept[0] is module:
        return kept[1], kept[2]
    text, line_of = _parsed_lines(module) or _printed_module(module)
    if len(_PRINTED) >= 8:
        _PRINTED.clear()
    _PRINTED[id(module)] = (module, text, line_of)
    return text, line_of


def _parsed_lines(module) -> tuple[str, dict[int, int]] | None:
    """The module's own text with each instruction's line in it, or None where ptxas
    would not name the instructions by those lines (``.loc`` directives make
    ``-lineinfo`` name source lines) or two instructions share one."""
    text = getattr(module, "text", None)
    if not text or module.files or _LOC.search(text):
        return None
    line_of: dict[int, int] = {}
    seen: set[int] = set()
    for func in module.functions:
        for ins in func.instructions:
            if not ins.line or ins.line in seen:
                return None
            seen.add(ins.line)
            line_of[id(ins)] = ins.line
    return text, line_of


def _printed_module(module) -> tuple[str, dict[int, int]]:
    from kerncast.ptx import parse

    text = printed_text(module)
    again = parse(text)
    printed = {f.name: f for f in again.functions}
    line_of: dict[int, int] = {}
    for func in module.functions:
        other = printed.get(func.name)
        if other is None or len(other.instructions) != len(func.instructions):
            raise ValueError(f"printing function {func.name} changed its instructions")
        for a, b in zip(func.instructions, other.instructions):
            line_of[id(a)] = b.line
    return text, line_of


def _one_to_one(ins) -> frozenset[str]:
    """For PTX instructions that become exactly one SASS instruction, the SASS
    mnemonics that instruction can have (empty for the others)."""
    if ins.opcode in _ONE_TO_ONE_MEMORY:
        return _SASS_MEMORY if ins.space in _SPACES else frozenset()
    if ins.opcode in _ONE_TO_ONE_FLOAT:
        if (ins.type or "") in ("f32", "f64") and "wide" not in ins.flags:
            return _SASS_FLOAT
    return frozenset()


@dataclass
class _PtxLoop:
    key: tuple[str, int]
    parent: tuple[str, int] | None
    func: object
    header: object  # the Instruction starting the header block
    instrs: frozenset[int]  # ids of every instruction inside (inner loops too)


class _Ptx:
    """Counts, loops and one-to-one flags of the emulated program, by printed line."""

    def __init__(self, trace, line_of: dict[int, int]) -> None:
        from kerncast.ptx import build_cfg

        program = trace.program
        warp_counts, _ = trace.pc_counts
        self.count: dict[int, float] = {}
        self.one_to_one: dict[int, frozenset[str]] = {}
        self.lines: set[int] = set()
        for pc, item in enumerate(program.items):
            if item.kind == "bind":
                continue
            line = line_of.get(id(item.instr))
            if line is None:
                continue
            self.count[line] = self.count.get(line, 0.0) + float(warp_counts[pc])
        self.loop_of: dict[int, tuple[str, int] | None] = {}
        self.loops: dict[tuple[str, int], _PtxLoop] = {}
        seen = set()
        for frame in program.frames:
            func = frame.func
            if func.name in seen:
                continue
            seen.add(func.name)
            for ins in func.instructions:
                line = line_of.get(id(ins))
                if line is not None:
                    self.lines.add(line)
                    kinds = _one_to_one(ins)
                    if kinds:
                        self.one_to_one[line] = kinds
            cfg = build_cfg(func)
            inner = cfg.innermost_loops
            for loop in cfg.loops:
                members = frozenset(id(func.instructions[i]) for b in loop.blocks
                                    for i in range(cfg.blocks[b].start, cfg.blocks[b].end))
                header = func.instructions[cfg.blocks[loop.header].start] \
                    if cfg.blocks[loop.header].size else None
                parent = None if loop.parent is None else (func.name, loop.parent)
                self.loops[(func.name, loop.index)] = _PtxLoop(
                    (func.name, loop.index), parent, func, header, members)
            for i, ins in enumerate(func.instructions):
                line = line_of.get(id(ins))
                if line is None:
                    continue
                b = cfg.block_of[i]
                self.loop_of[line] = None if inner[b] is None else (func.name, inner[b])

    def within(self, inner, outer) -> bool:
        """Whether PTX loop ``inner`` is ``outer`` or nested in it."""
        while inner is not None:
            if inner == outer:
                return True
            inner = self.loops[inner].parent
        return False


class _Steps:
    """A trace's steps ordered by warp (stable: each warp's in issue order), as every
    loop's trip count reads them: built once per mapping, not once per loop."""

    def __init__(self, trace) -> None:
        order = trace.warp_order
        warps = trace.step_warps[order]
        step = trace.row_steps[order]
        self.pc0, self.pc1 = trace.step_pc0[step], trace.step_pc1[step]
        #: where each warp's steps begin
        self.first = np.ones(len(warps), bool)
        self.first[1:] = warps[1:] != warps[:-1]


def _trips(trace, loop: _PtxLoop, steps: _Steps) -> np.ndarray:
    """Every entry's trip count (header executions) of a PTX loop, over all warps
    and every inlined copy of its function (``steps``: the trace's, by warp)."""
    program = trace.program
    n = len(program.items)
    inside = np.zeros(n + 1, bool)
    headers = []
    owner_in: bool = False
    for pc, item in enumerate(program.items):
        if item.frame.func is loop.func:
            owner_in = id(item.instr) in loop.instrs
            if item.instr is loop.header and item.kind in ("op", "call", "ret"):
                headers.append(pc)
            inside[pc] = owner_in
        else:
            frame = item.frame
            while frame is not None and frame.func is not loop.func:
                frame = frame.parent
            inside[pc] = owner_in if frame is not None else False
    if not headers:
        return np.zeros(0, np.int64)
    headers = np.asarray(sorted(headers), np.int64)
    pc0, pc1, first = steps.pc0, steps.pc1, steps.first
    slot = np.searchsorted(headers, pc0)
    found = slot < len(headers)
    head = np.where(found, headers[np.minimum(slot, len(headers) - 1)], -1)
    at = np.flatnonzero(found & (head < pc1))  # the steps that run the header
    if not len(at):
        return np.zeros(0, np.int64)
    head, start = head[at], pc0[at]
    # the pc before the header ran: in the same step, else the end of the warp's last one
    prev_last = np.where(at > 0, pc1[np.maximum(at - 1, 0)] - 1, n)
    prev = np.where(head > start, head - 1, prev_last)
    entry = first[at] | (head > start) | ~inside[np.clip(prev, 0, n)]
    entry[0] = True
    ids = np.cumsum(entry) - 1
    return np.bincount(ids).astype(np.int64)


# -- the SASS side ------------------------------------------------------------------


def _sass_loops(func) -> tuple[list[int | None], dict[int, frozenset[int]], dict[int, int | None]]:
    """Innermost natural loop (by header) of every block; each loop's blocks; each
    loop's enclosing loop."""
    from kerncast.ptx import dom_tree

    blocks = func.blocks
    succs = [b.successors for b in blocks]
    preds: list[list[int]] = [[] for _ in blocks]
    for b in blocks:
        for s in b.successors:
            preds[s].append(b.index)
    dom = dom_tree(len(blocks), 0, succs, preds)
    back: dict[int, list[int]] = {}
    for b in blocks:
        if not dom.reachable(b.index):
            continue
        for s in b.successors:
            if dom.dominates(s, b.index):
                back.setdefault(s, []).append(b.index)
    bodies: dict[int, frozenset[int]] = {}
    for header, latches in back.items():
        body, work = {header}, [x for x in latches if x != header]
        body.update(work)
        while work:
            node = work.pop()
            for p in preds[node]:
                if p not in body and dom.reachable(p):
                    body.add(p)
                    work.append(p)
        bodies[header] = frozenset(body)
    innermost: list[int | None] = [None] * len(blocks)
    for header, body in sorted(bodies.items(), key=lambda kv: -len(kv[1])):
        for b in body:
            innermost[b] = header
    parent: dict[int, int | None] = {}
    for header, body in bodies.items():
        outer = [h for h, other in bodies.items() if h != header and header in other
                 and len(other) > len(body)]
        parent[header] = min(outer, key=lambda h: len(bodies[h])) if outer else None
    return innermost, bodies, parent


def _anchor_instructions(block, ptx: _Ptx) -> list:
    """The instructions whose PTX lines say how often ``block`` runs: unpredicated,
    with a line of their own, memory accesses and barriers first (ptxas does not
    move those across branches), else not ones ptxas places or rematerialises
    freely (constant and special-register reads, moves, ``BSSY``, an ``EXIT``
    duplicated into a branch), when there are such."""
    known = [i for i in block.instructions if i.line in ptx.lines]
    for pick in (lambda i: not i.inherited and not i.conditional and i.base in _FIXED,
                 lambda i: not i.inherited and not i.conditional and i.base not in _MOVABLE,
                 lambda i: not i.inherited and not i.conditional,
                 lambda i: not i.inherited, lambda i: True):
        chosen = [i for i in known if pick(i)]
        if chosen:
            return chosen
    return []


def _copies(instructions, ptx: _Ptx, loop) -> int | None:
    """How many copies of PTX loop ``loop``'s own body these SASS instructions hold."""
    per_line = Counter(i.line for i in instructions
                       if i.base in ptx.one_to_one.get(i.line, ()) and
                       ptx.loop_of.get(i.line) == loop)
    if not per_line:
        return None
    return max(1, int(round(float(np.median(list(per_line.values()))))))


def _vote(instructions, ptx: _Ptx):
    votes = Counter(ptx.loop_of.get(i.line) for i in instructions)
    if not votes:
        return None
    best = max(votes.values())
    tied = [k for k, v in votes.items() if v == best]

    def depth(key):
        d = 0
        while key is not None:
            d, key = d + 1, ptx.loops[key].parent
        return d

    return max(tied, key=depth)


def _slow_path(name: str | None) -> bool:
    """ptxas's out-of-line slow paths (IEEE division, square root, reciprocal of
    special or denormal operands), called only when the inline fast path's check fails."""
    return bool(name) and name.startswith("$__internal_")


def _sass_loop_owner(func, header: int, body, own, ptx: _Ptx):
    """The PTX loop a SASS loop runs: the loop of the PTX branch its back edges were
    assembled from, else the PTX loop most of its instructions come from."""
    latches = [func.blocks[b].last for b in body if header in func.blocks[b].successors]
    votes = Counter(ptx.loop_of.get(i.line) for i in latches if i.line in ptx.lines)
    votes.pop(None, None)
    if votes:
        return votes.most_common(1)[0][0]
    instrs = [i for b in own for i in _anchor_instructions(func.blocks[b], ptx)
              if ptx.loop_of.get(i.line) is not None]
    return _vote(instrs, ptx)


def _functions(code, entry: str) -> list:
    """The kernel's SASS function and the subroutines it calls (not slow paths)."""
    names, todo = [entry], [entry]
    while todo:
        func = code.function(todo.pop())
        for block in func.blocks:
            for ins in block.instructions:
                if ins.base == "CALL" and ins.target in code.functions \
                        and ins.target not in names and not _slow_path(ins.target):
                    names.append(ins.target)
                    todo.append(ins.target)
    return [code.function(n) for n in names]


def map_sass(trace, *, arch: str = "sm_90", code=None) -> SassMapping:
    """Estimate the executed SASS instructions of an emulated launch from the real
    SASS of its module (see the module doc).

    ``code`` is the module's :class:`~kerncast.trace._sasscode.SassCode` (assembled
    here when not given). Raises :class:`~kerncast.ToolchainError` when ptxas or
    nvdisasm is missing or fails, :class:`ValueError` when the trace has no module.
    """
    from kerncast.trace._sasscode import assemble

    program = getattr(trace, "program", None)
    if program is None or program.module is None:
        raise ValueError("the SASS mapping needs the PTX module the trace was emulated from")
    text, line_of = printed_module(program.module)
    if code is None:
        code = assemble(text, arch, name=program.kernel.name)
    ptx = _Ptx(trace, line_of)
    functions = _functions(code, program.kernel.name)

    # per block: anchor count, PTX loop, SASS loop
    info = []  # (func, block, anchor, loop_of_block, innermost sass loop key)
    sass_loops: dict[tuple[str, int], dict] = {}
    for func in functions:
        reach = func.reachable()
        innermost, bodies, _ = _sass_loops(func)
        for header, body in bodies.items():
            own = [b for b in body if innermost[b] == header]
            sass_loops[(func.name, header)] = {"own": own, "func": func,
                                               "ptx": _sass_loop_owner(func, header, body,
                                                                       own, ptx)}
        for block in func.blocks:
            if block.index not in reach:
                continue
            sl = innermost[block.index]
            sl = None if sl is None else (func.name, sl)
            anchors = _anchor_instructions(block, ptx)
            owner = sass_loops[sl]["ptx"] if sl is not None else None
            if owner is not None:
                # in a loop: code of lines outside it (rematerialised thread indices,
                # constants of other loops) says nothing about how often the block runs
                inside = [i for i in anchors if ptx.within(ptx.loop_of.get(i.line), owner)]
                anchors = inside or anchors
            loop = _vote(anchors, ptx)
            mine = [i for i in anchors if ptx.loop_of.get(i.line) == loop]
            anchor = float(np.median([ptx.count.get(i.line, 0.0) for i in mine])) \
                if mine else 0.0
            if any(i.base == "CALL" and _slow_path(i.target) for i in block.instructions):
                anchor = 0.0  # the call of a slow path: taken as never run
            info.append((func, block, anchor, loop, sl))

    # regions of every PTX loop: SASS loops that run it, straight blocks that hold it
    regions: dict[tuple[str, int], list[dict]] = {}
    for key, sl in sass_loops.items():
        if sl["ptx"] is not None:
            instrs = [i for b in sl["own"] for i in sl["func"].blocks[b].instructions]
            regions.setdefault(sl["ptx"], []).append(
                {"kind": "loop", "key": key, "k": _copies(instrs, ptx, sl["ptx"]) or 1})
    straight = {}
    for index, (func, block, anchor, loop, sl) in enumerate(info):
        if loop is None:
            continue
        owner = sass_loops[sl]["ptx"] if sl is not None else None
        if owner is not None and ptx.within(owner, loop):
            continue  # runs with its SASS loop
        k = _copies(block.instructions, ptx, loop)
        straight[index] = loop
        regions.setdefault(loop, []).append({"kind": "once" if k else "overhead",
                                             "index": index, "k": k or 0})

    loop_scale: dict[tuple[str, int], float] = {}
    fixed: dict[int, float] = {}
    report = []
    steps: _Steps | None = None
    for loop, parts in regions.items():
        unrolled = any(p["k"] > 1 for p in parts) or any(p["kind"] != "loop" for p in parts)
        if not unrolled:
            continue
        steps = steps or _Steps(trace)
        trips = _trips(trace, ptx.loops[loop], steps)
        total_trips = float(trips.sum())
        rem = trips.copy()
        counted: dict[int, float] = {}
        order = sorted((p for p in parts if p["kind"] != "overhead"),
                       key=lambda p: (-p["k"], p["kind"] == "loop"))
        entered: dict[tuple[str, int], float] = {}
        for n, part in enumerate(order):
            k = part["k"]
            if part["kind"] == "loop":
                runs = rem // k
                counted[n] = float(runs.sum())
                entered[part["key"]] = float(np.count_nonzero(runs))
                rem = rem - runs * k
            else:
                took = rem >= k
                counted[n] = float(took.sum())
                rem = np.where(took, rem - k, rem)
        loops_in = [n for n, p in enumerate(order) if p["kind"] == "loop"]
        if loops_in and rem.sum():
            last = min(loops_in, key=lambda n: order[n]["k"])
            counted[last] += float(rem.sum()) / order[last]["k"]
        for n, part in enumerate(order):
            if part["kind"] == "loop":
                loop_scale[part["key"]] = counted[n] / total_trips if total_trips else 0.0
            else:
                fixed[part["index"]] = counted[n]
        for part in parts:
            if part["kind"] == "overhead":
                # once per entry; a block that only leads into one of the unrolled
                # loops, once per entry that runs that loop
                func, block = info[part["index"]][:2]
                into = [(func.name, s) for s in block.successors]
                fixed[part["index"]] = entered[into[0]] if len(into) == 1 and \
                    into[0] in entered else float(len(trips))
        report.append({"loop": loop, "entries": int(len(trips)), "iterations": total_trips,
                       "copies": sorted((p["k"] for p in parts if p["k"]), reverse=True)})

    counts: dict[tuple[str, int], float] = {}
    for index, (func, block, anchor, loop, sl) in enumerate(info):
        if index in fixed:
            count = fixed[index]
        elif sl is not None and sl in loop_scale:
            count = anchor * loop_scale[sl]
        else:
            count = anchor
        counts[(func.name, block.index)] = count
    splits = _splits_by_line(trace, line_of)
    for func in functions:
        extra = _join_arrivals(func, splits)
        for block in func.blocks:
            if not _join(block) or (func.name, block.index) not in counts:
                continue
            # a BSYNC alone at a join point: the reconverged code after it runs once
            # per warp that gets there, and every path of a divergent branch in the
            # BSSY region it closes issues the BSYNC when it arrives
            after = block
            while _join(after) and after.successors:
                after = func.blocks[after.successors[0]]
            count = counts.get((func.name, after.index))
            if count is not None:
                counts[(func.name, block.index)] = count + extra.get(block.index, 0.0)
    result = SassMapping(0.0, loops=report)
    for func, block, *_ in info:
        count = counts[(func.name, block.index)]
        result.blocks.append((func.name, block.index, count, len(block)))
        result.total += count * len(block)
        for ins in block.instructions:
            result.by_opcode[ins.base] = result.by_opcode.get(ins.base, 0.0) + count
    return result


def _splits_by_line(trace, line_of: dict[int, int]) -> dict[int, float]:
    """Extra paths made by divergent executions of the PTX branches, by line (paths
    that only meet again at the exit are left out: they reach no ``BSYNC``)."""
    program = trace.program
    out: dict[int, float] = {}
    for (pc, reconv), groups in getattr(trace, "splits", {}).items():
        line = line_of.get(id(program.items[pc].instr))
        if reconv >= 0 and line is not None:
            out[line] = out.get(line, 0.0) + groups
    return out


def _join_arrivals(func, splits: dict[int, float]) -> dict[int, float]:
    """Per join block (a ``BSYNC`` ending a ``BSSY`` region): the paths that the
    divergent branches of its region (not of a region nested in it) add. A PTX
    branch's paths are shared among the SASS branches assembled from it."""
    where = {label: b.index for b in func.blocks for label in b.labels}
    reach = func.reachable()
    regions = []
    for block in func.blocks:
        if block.index not in reach:
            continue
        for ins in block.instructions:
            if ins.base != "BSSY" or ins.target not in where:
                continue
            join = where[ins.target] - 1
            if join < 0 or not _join(func.blocks[join]):
                continue
            seen, todo = {block.index}, [block.index]
            while todo:
                for nxt in func.blocks[todo.pop()].successors:
                    if nxt not in seen and nxt != join and nxt > block.index - 1 and \
                            nxt < join:
                        seen.add(nxt)
                        todo.append(nxt)
            regions.append((join, seen))
    copies = Counter(b.last.line for b in func.blocks if b.index in reach
                     and b.last.base in ("BRA", "BRX") and (b.last.conditional or
                                                          b.last.base == "BRX"))
    out: dict[int, float] = {}
    for b in func.blocks:
        last = b.last
        if b.index not in reach or last.base not in ("BRA", "BRX") or \
                not (last.conditional or last.base == "BRX") or last.line not in splits:
            continue
        inside = [r for r in regions if b.index in r[1]]
        if inside:
            join = min(inside, key=lambda r: len(r[1]))[0]
            out[join] = out.get(join, 0.0) + splits[last.line] / copies[last.line]
    return out


def _join(block) -> bool:
    """A block of ``BSYNC`` only: ptxas puts one right before the label a ``BSSY``
    names, with the line of the code before it or of the branch it closes, neither
    of which says how often it runs."""
    return all(i.base == "BSYNC" for i in block.instructions)
