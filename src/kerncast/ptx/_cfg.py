"""Basic blocks, the control-flow graph and (post-)dominator trees of a function."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from kerncast.ptx._ir import Function, Instruction

if TYPE_CHECKING:
    from kerncast.ptx._loops import Loop

__all__ = ["BasicBlock", "CFG", "DomTree", "build_cfg", "dom_tree", "dominators", "post_dominators"]

_ENDS_BLOCK = frozenset(("bra", "brx", "ret", "exit", "trap"))
_LEAVES = frozenset(("ret", "exit", "trap"))


@dataclass(frozen=True, slots=True)
class BasicBlock:
    """Instructions ``start`` to ``end - 1`` of a function, entered only at ``start``.

    ``exits`` is True when control can leave the function from this block: it ends
    in ``ret``/``exit``/``trap`` (guarded or not) or falls off the end of the body.
    The last block is empty (``start == end``) when a branch targets the end of
    the body.
    """

    index: int
    start: int
    end: int
    labels: tuple[str, ...]
    successors: tuple[int, ...]
    predecessors: tuple[int, ...]
    exits: bool

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def terminator(self) -> int | None:
        """Index of the last instruction (None for an empty block)."""
        return self.end - 1 if self.end > self.start else None


@dataclass(frozen=True, slots=True)
class DomTree:
    """A (post-)dominator tree over block indices.

    ``idom[b]`` is the immediate dominator of block ``b``; None for the root and for
    blocks the analysis cannot reach (unreachable code; for post-dominators, blocks
    of endless loops). For post-dominators the root is the virtual exit node
    ``root == len(blocks)``.
    """

    idom: tuple[int | None, ...]
    root: int
    _pre: tuple[int, ...]
    _post: tuple[int, ...]

    def reachable(self, node: int) -> bool:
        return node == self.root or self.idom[node] is not None

    def dominates(self, a: int, b: int) -> bool:
        """Whether ``a`` dominates ``b`` (every node dominates itself)."""
        if not (self.reachable(a) and self.reachable(b)):
            return False
        return self._pre[a] <= self._pre[b] and self._post[b] <= self._post[a]

    def children(self, node: int) -> tuple[int, ...]:
        return tuple(n for n, d in enumerate(self.idom) if d == node)


def _reverse_postorder(root: int, succs: Sequence[Sequence[int]]) -> list[int]:
    seen, order = {root}, []
    stack = [(root, iter(succs[root]))]
    while stack:
        node, it = stack[-1]
        for nxt in it:
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(succs[nxt])))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def dom_tree(n: int, root: int, succs: Sequence[Sequence[int]],
             preds: Sequence[Sequence[int]]) -> DomTree:
    """The dominator tree of a graph of ``n`` nodes given by their successors and
    predecessors: Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast
    Dominance Algorithm", 2001) on the nodes reachable from ``root``."""
    order = _reverse_postorder(root, succs)
    rank = {node: i for i, node in enumerate(order)}
    idom: list[int | None] = [None] * n
    idom[root] = root
    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            new = None
            for pred in preds[node]:
                if idom[pred] is None:
                    continue
                new = pred if new is None else _intersect(pred, new, idom, rank)
            if new != idom[node]:
                idom[node] = new
                changed = True
    idom[root] = None
    return _numbered(idom, root)


def _intersect(a: int, b: int, idom: list[int | None], rank: dict[int, int]) -> int:
    while a != b:
        while rank[a] > rank[b]:
            a = idom[a]  # type: ignore[assignment]
        while rank[b] > rank[a]:
            b = idom[b]  # type: ignore[assignment]
    return a


def _numbered(idom: list[int | None], root: int) -> DomTree:
    """Pre/post numbers of the tree, for O(1) dominance queries."""
    children: list[list[int]] = [[] for _ in idom]
    for node, parent in enumerate(idom):
        if parent is not None:
            children[parent].append(node)
    pre, post = [-1] * len(idom), [-1] * len(idom)
    counter = 0
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            post[node] = counter
        else:
            pre[node] = counter
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(children[node]))
        counter += 1
    return DomTree(tuple(idom), root, tuple(pre), tuple(post))


def _leaders(func: Function) -> list[int]:
    n = len(func.instructions)
    leaders = {0}
    leaders.update(i for i in func.labels.values() if i <= n)
    for index, instr in enumerate(func.instructions):
        if instr.opcode in _ENDS_BLOCK:
            leaders.add(index + 1)
        leaders.update(instr.targets)
    if n and not any(t == n for i in func.instructions for t in i.targets):
        leaders.discard(n)
    return sorted(leaders)


def _successors(instr: Instruction | None, block: int, count: int,
                block_of: dict[int, int]) -> tuple[list[int], bool]:
    """Successor blocks of a block ending in ``instr``, and whether it may exit."""
    fall = [block + 1] if block + 1 < count else []
    if instr is None:
        return fall, not fall
    if instr.opcode in ("bra", "brx"):
        taken = [block_of[t] for t in instr.targets]
        succs = taken + fall if instr.guard is not None else taken
        return list(dict.fromkeys(succs)), instr.guard is not None and not fall
    if instr.opcode in _LEAVES:
        return (fall if instr.guard is not None else []), True
    return fall, not fall


class CFG:
    """The control-flow graph of one function; analyses are computed on first use.

    Attributes
    ----------
    function : Function
    blocks : tuple of BasicBlock
        In body order; block 0 is the entry.
    block_of : tuple of int
        The block of every instruction index (one more entry, for
        ``len(instructions)``, when a branch targets the end of the body).
    """

    def __init__(self, function: Function) -> None:
        if function.is_declaration:
            raise ValueError(f"function {function.name} has no body to analyse")
        self.function = function
        n = len(function.instructions)
        starts = _leaders(function) or [0]
        ends = starts[1:] + [n if starts[-1] < n else starts[-1]]
        index_of = {start: b for b, start in enumerate(starts)}
        block_of = [0] * n
        for b, (start, end) in enumerate(zip(starts, ends)):
            block_of[start:end] = [b] * (end - start)
        if n and starts[-1] == n:
            block_of.append(len(starts) - 1)
        succs, exits = [], []
        for b, (start, end) in enumerate(zip(starts, ends)):
            last = function.instructions[end - 1] if end > start else None
            s, leaves = _successors(last, b, len(starts), index_of)
            succs.append(s)
            exits.append(leaves)
        preds: list[list[int]] = [[] for _ in starts]
        for b, s in enumerate(succs):
            for t in s:
                preds[t].append(b)
        labels: list[list[str]] = [[] for _ in starts]
        for name, index in function.labels.items():
            if index in index_of:
                labels[index_of[index]].append(name)
        self.blocks = tuple(BasicBlock(b, starts[b], ends[b], tuple(labels[b]), tuple(succs[b]),
                                       tuple(preds[b]), exits[b]) for b in range(len(starts)))
        self.block_of = tuple(block_of)

    entry = 0

    @property
    def exit_blocks(self) -> tuple[int, ...]:
        """Blocks from which control can leave the function."""
        return tuple(b.index for b in self.blocks if b.exits)

    @property
    def edges(self) -> tuple[tuple[int, int], ...]:
        return tuple((b.index, s) for b in self.blocks for s in b.successors)

    def block_at(self, instruction: int) -> BasicBlock:
        """The block holding instruction index ``instruction``."""
        return self.blocks[self.block_of[instruction]]

    @cached_property
    def dominators(self) -> DomTree:
        succs = [b.successors for b in self.blocks]
        preds = [b.predecessors for b in self.blocks]
        return dom_tree(len(self.blocks), self.entry, succs, preds)

    @cached_property
    def post_dominators(self) -> DomTree:
        """Post-dominators over the reversed graph rooted at a virtual exit node."""
        n = len(self.blocks)
        exit_node = n
        rsuccs: list[list[int]] = [list(b.predecessors) for b in self.blocks] + [[]]
        rpreds: list[list[int]] = [list(b.successors) for b in self.blocks] + [[]]
        for b in self.blocks:
            if b.exits:
                rsuccs[exit_node].append(b.index)
                rpreds[b.index].append(exit_node)
        return dom_tree(n + 1, exit_node, rsuccs, rpreds)

    @cached_property
    def loops(self) -> tuple[Loop, ...]:
        from kerncast.ptx._loops import find_loops

        return find_loops(self)

    @cached_property
    def innermost_loops(self) -> tuple[int | None, ...]:
        """For every block, the index in ``loops`` of the innermost loop holding it."""
        best: list[int | None] = [None] * len(self.blocks)
        for loop in self.loops:
            for block in loop.blocks:
                current = best[block]
                if current is None or self.loops[current].depth < loop.depth:
                    best[block] = loop.index
        return tuple(best)

    def loop_depth(self, block: int) -> int:
        """How many loops hold ``block`` (0 outside every loop)."""
        inner = self.innermost_loops[block]
        return 0 if inner is None else self.loops[inner].depth

    @cached_property
    def reconvergence(self) -> dict[int, int | None]:
        from kerncast.ptx._loops import find_reconvergence

        return find_reconvergence(self)

    @cached_property
    def divergent_branches(self) -> tuple[int, ...]:
        from kerncast.ptx._dataflow import find_divergent_branches

        return find_divergent_branches(self)

    def __repr__(self) -> str:
        return (f"CFG({self.function.name}: {len(self.blocks)} blocks, "
                f"{len(self.edges)} edges)")


#: CFGs of the last functions analysed. Not a weak mapping: a CFG refers to its function,
#: so a weak key would never die and every function a process parsed would stay alive.
CACHE_SIZE = 256
_CACHE: OrderedDict[int, tuple[Function, CFG]] = OrderedDict()
_LOCK = threading.Lock()  # the SASS worker thread analyses too


def build_cfg(function: Function) -> CFG:
    """The CFG of ``function`` (cached: the same object for the same function, among the
    last :data:`CACHE_SIZE` functions analysed)."""
    key = id(function)
    with _LOCK:
        kept = _CACHE.get(key)
        if kept is not None and kept[0] is function:
            _CACHE.move_to_end(key)
            return kept[1]
    cfg = CFG(function)
    with _LOCK:
        _CACHE[key] = (function, cfg)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return cfg


def _cfg(target: Function | CFG) -> CFG:
    return target if isinstance(target, CFG) else build_cfg(target)


def dominators(target: Function | CFG) -> DomTree:
    """The dominator tree of a function's blocks (root: the entry block 0)."""
    return _cfg(target).dominators


def post_dominators(target: Function | CFG) -> DomTree:
    """The post-dominator tree; ``root`` is the virtual exit node ``len(blocks)``."""
    return _cfg(target).post_dominators
