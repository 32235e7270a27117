"""Natural loops and reconvergence points of conditional branches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kerncast.ptx._cfg import CFG
    from kerncast.ptx._ir import Function

__all__ = ["Loop", "find_loops", "find_reconvergence", "loops", "reconvergence_points"]


@dataclass(frozen=True, slots=True)
class Loop:
    """A natural loop: a header block and every block that reaches a back edge to it.

    Back edges with the same header form one loop. ``depth`` is 1 for an outermost
    loop; ``parent`` is the index (in ``CFG.loops``) of the innermost enclosing
    loop, None at the outside. ``exits`` lists the edges ``(inside, outside)``.
    """

    index: int
    header: int
    blocks: frozenset[int]
    latches: tuple[int, ...]
    exits: tuple[tuple[int, int], ...]
    depth: int
    parent: int | None

    def __contains__(self, block: int) -> bool:
        return block in self.blocks


def _natural_body(header: int, latches: list[int], preds: list[tuple[int, ...]]) -> set[int]:
    body = {header}
    work = [b for b in latches if b != header]
    body.update(work)
    while work:
        node = work.pop()
        for pred in preds[node]:
            if pred not in body:
                body.add(pred)
                work.append(pred)
    return body


def find_loops(cfg: CFG) -> tuple[Loop, ...]:
    """Every natural loop of ``cfg``, ordered by header block."""
    dom = cfg.dominators
    preds = [b.predecessors for b in cfg.blocks]
    back: dict[int, list[int]] = {}
    for block in cfg.blocks:
        if not dom.reachable(block.index):
            continue
        for succ in block.successors:
            if dom.dominates(succ, block.index):
                back.setdefault(succ, []).append(block.index)
    headers = sorted(back)
    bodies = [_natural_body(h, back[h], preds) for h in headers]
    parents: list[int | None] = []
    for i, header in enumerate(headers):
        outer = [j for j in range(len(headers))
                 if j != i and header in bodies[j] and len(bodies[j]) > len(bodies[i])]
        parents.append(min(outer, key=lambda j: len(bodies[j])) if outer else None)
    result = []
    for i, header in enumerate(headers):
        depth, parent = 1, parents[i]
        while parent is not None:
            depth, parent = depth + 1, parents[parent]
        exits = tuple((b, s) for b in sorted(bodies[i]) for s in cfg.blocks[b].successors
                      if s not in bodies[i])
        result.append(Loop(i, header, frozenset(bodies[i]), tuple(sorted(back[header])), exits,
                           depth, parents[i]))
    return tuple(result)


def find_reconvergence(cfg: CFG) -> dict[int, int | None]:
    """Reconvergence point of every branch that can split a warp.

    Maps the instruction index of each guarded ``bra`` (and each ``brx`` with
    several targets) to the first instruction index of its block's immediate
    post-dominator, or to None where the paths only meet at the function's exit
    (or never, in an endless loop). An index equal to ``len(instructions)`` means
    the empty block at the end of the body.
    """
    pdom = cfg.post_dominators
    exit_node = len(cfg.blocks)
    instructions = cfg.function.instructions
    points: dict[int, int | None] = {}
    for block in cfg.blocks:
        last = block.terminator
        if last is None:
            continue
        instr = instructions[last]
        if instr.opcode not in ("bra", "brx"):
            continue
        if instr.guard is None and len(block.successors) < 2:
            continue
        ipdom = pdom.idom[block.index]
        points[last] = None if ipdom is None or ipdom == exit_node else cfg.blocks[ipdom].start
    return points


def loops(target: Function | CFG) -> tuple[Loop, ...]:
    """The natural loops of a function (or of its CFG), with nesting."""
    from kerncast.ptx._cfg import _cfg

    return _cfg(target).loops


def reconvergence_points(target: Function | CFG) -> dict[int, int | None]:
    """Branch instruction index -> reconvergence instruction index (see ``find_reconvergence``)."""
    from kerncast.ptx._cfg import _cfg

    return _cfg(target).reconvergence
