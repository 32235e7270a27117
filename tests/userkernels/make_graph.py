"""Write the Les Misérables co-appearance graph (a real, public graph: Knuth's Stanford
GraphBase, as bundled with NetworkX, ``networkx.les_miserables_graph()``) as CSR ``.npy``
files for the graph kernels of this folder.

Run once (NetworkX is not a kerncast dependency; install it anywhere else)::

    pip install --target /tmp/nxlib networkx
    PYTHONPATH=/tmp/nxlib python tests/userkernels/make_graph.py

Writes, next to this script (vertices numbered by sorted character name):

- ``lesmis_row.npy``    int32[V+1]  CSR row offsets (undirected: each edge both ways)
- ``lesmis_col.npy``    int32[2E]   CSR column indices, ascending within a row
- ``lesmis_weight.npy`` float32[2E] the edge weights (co-appearance counts), CSR order
- ``lesmis_level.npy``  int32[V]    BFS levels from Valjean after two levels are known
                                    (0 and 1; -1 elsewhere): the frontier of a
                                    level-1 expansion
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import networkx as nx
import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = "Valjean"
KNOWN_LEVELS = 2  # levels 0 .. KNOWN_LEVELS-1 are filled in


def csr(graph: nx.Graph) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    names = sorted(graph.nodes)
    index = {name: i for i, name in enumerate(names)}
    row = [0]
    col: list[int] = []
    weight: list[float] = []
    for name in names:
        neighbours = sorted((index[m], graph.edges[name, m].get("weight", 1))
                            for m in graph.neighbors(name))
        col += [j for j, _ in neighbours]
        weight += [w for _, w in neighbours]
        row.append(len(col))
    return (names, np.asarray(row, np.int32), np.asarray(col, np.int32),
            np.asarray(weight, np.float32))


def partial_levels(row: np.ndarray, col: np.ndarray, source: int, known: int) -> np.ndarray:
    level = np.full(len(row) - 1, -1, np.int32)
    level[source] = 0
    queue = deque([source])
    while queue:
        v = queue.popleft()
        if level[v] + 1 >= known:
            continue
        for w in col[row[v]:row[v + 1]]:
            if level[w] < 0:
                level[w] = level[v] + 1
                queue.append(w)
    return level


def main() -> None:
    names, row, col, weight = csr(nx.les_miserables_graph())
    level = partial_levels(row, col, names.index(SOURCE), KNOWN_LEVELS)
    for stem, array in (("row", row), ("col", col), ("weight", weight), ("level", level)):
        np.save(HERE / f"lesmis_{stem}.npy", array)
    print(f"{len(names)} vertices, {len(col)} directed edges; "
          f"frontier at level {KNOWN_LEVELS - 1}: {int((level == KNOWN_LEVELS - 1).sum())}")


if __name__ == "__main__":
    main()
