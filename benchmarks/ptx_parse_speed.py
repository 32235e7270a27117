"""Parse speed of kerncast.ptx: lines per second on real compiler output.

Builds a module of about 5,000+ lines by repeating the kernels of the committed
nvcc test file (renamed, so that the module stays valid), then times ``parse``,
``to_ptx`` and the analyses (CFG, dominators, loops, reconvergence, divergence).

    PYTHONPATH=src python benchmarks/ptx_parse_speed.py [--lines 5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from kerncast.ptx import parse, summarize, to_ptx

DATA = Path(__file__).resolve().parents[1] / "tests" / "ptx" / "data" / "stress_sm90.ptx"


def big_module(min_lines: int) -> str:
    """The test file with its .entry kernels repeated under new names."""
    text = DATA.read_text()
    kernels = re.findall(r"\.visible \.entry .*?\n}\n", text, flags=re.S)
    parts, copy = [text], 0
    while sum(p.count("\n") for p in parts) < min_lines:
        copy += 1
        for kernel in kernels:
            name = re.match(r"\.visible \.entry (\w+)", kernel).group(1)
            parts.append(kernel.replace(name, f"{name}_copy{copy}"))
    return "\n".join(parts)


def best_of(repeat: int, func) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = big_module(args.lines)
    lines = text.count("\n")
    module = parse(text)
    n_instr = sum(len(f.instructions) for f in module.functions)

    def analyse() -> None:
        for func in module.functions:
            if not func.is_declaration:
                summarize(_fresh(func))

    t_parse = best_of(args.repeat, lambda: parse(text))
    t_print = best_of(args.repeat, lambda: to_ptx(module))
    t_analyse = best_of(args.repeat, analyse)
    print(f"module: {lines} lines, {len(module.functions)} functions, {n_instr} instructions")
    print(f"parse:    {t_parse * 1e3:8.1f} ms  {lines / t_parse:12,.0f} lines/s")
    print(f"to_ptx:   {t_print * 1e3:8.1f} ms  {lines / t_print:12,.0f} lines/s")
    print(f"analyses: {t_analyse * 1e3:8.1f} ms  {n_instr / t_analyse:12,.0f} instructions/s "
          "(CFG, dominators, post-dominators, loops, reconvergence, divergence, mix)")


def _fresh(func):
    """A copy of the function, so that cached analyses are recomputed each round."""
    import dataclasses

    return dataclasses.replace(func)


if __name__ == "__main__":
    main()
