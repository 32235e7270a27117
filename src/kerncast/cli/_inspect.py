"""``kerncast inspect``: a kernel's PTX resources and occupancy on a device."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.markup import escape

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json
from kerncast.corpus import get_kernel
from kerncast.devices import get_device, occupancy

DEFAULT_DEVICE = "h100"
DEFAULT_BLOCK = 256


def parse_defines(items: list[str] | None) -> dict[str, str | None]:
    """``["TILE=16", "DEBUG"]`` → ``{"TILE": "16", "DEBUG": None}``."""
    out: dict[str, str | None] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not name.strip():
            raise InputError(f"--define {item!r} names no macro; write --define NAME=VALUE")
        out[name.strip()] = value if sep else None
    return out


def _target(file: str, lang: str | None) -> tuple[str, str | None, dict, str | None, int | None]:
    """Source, language, default defines, the corpus kernel's entry and its block size."""
    if not file.startswith("corpus:"):
        return file, lang, {}, None, None
    kernel = get_kernel(file)
    language = lang or kernel.languages[0]
    launch = kernel.launch("small")
    return (str(kernel.source_path(language)), language, dict(launch.defines), kernel.entry,
            launch.threads_per_block)


def _block_for(kernel: Any, block: int | None, corpus_block: int | None) -> tuple[int, str]:
    limit = kernel.launch_bounds.thread_limit
    if block is not None:
        if limit is not None and block > limit:
            raise InputError(f"block size {block} exceeds the {limit} threads that kernel "
                             f"{kernel.entry} allows (.maxntid/.reqntid); choose --block {limit} "
                             f"or less")
        return block, "--block"
    if kernel.launch_bounds.required_threads is not None:
        return limit, ".reqntid"
    if corpus_block is not None:
        return corpus_block, "the corpus kernel's default launch"
    if limit is not None and limit < DEFAULT_BLOCK:
        return limit, ".maxntid"
    return DEFAULT_BLOCK, "default"


def ptx_analysis(kernel: Any) -> dict:
    """CFG and loop summary and the static instruction mix of ``kernel`` (kerncast.ptx)."""
    from kerncast.ptx import summarize  # noqa: PLC0415 (CLI start-up: ptx loads on use)

    return summarize(kernel.ir).to_dict()


def _kernel_report(kernel: Any, device: str, block: int | None,
                   corpus_block: int | None) -> dict:
    res = kernel.resources()
    threads, why = _block_for(kernel, block, corpus_block)
    occ = occupancy(device, threads, res.registers, res.shared_static)
    return {"name": kernel.name, "entry": kernel.entry,
            "params": [p.to_dict() for p in kernel.params],
            "resources": res.to_dict(), "block": threads, "block_from": why,
            "occupancy": occ.to_dict(), "analysis": ptx_analysis(kernel)}


def inspect_source(file: str, *, device: str = DEFAULT_DEVICE, defines: dict | None = None,
                   lang: str | None = None, block: int | None = None,
                   kernel: str | None = None, toolchain: str = "auto") -> dict:
    """Everything ``kerncast inspect`` shows, as a JSON-ready dict."""
    from kerncast.frontend import compile as compile_source  # noqa: PLC0415 (CLI start-up: frontend)

    dev = get_device(device)
    source, language, default_defines, corpus_entry, corpus_block = _target(file, lang)
    tu = compile_source(source, lang=language, arch=dev.key,
                        defines={**default_defines, **(defines or {})}, toolchain=toolchain)
    wanted = kernel or corpus_entry
    kernels = [tu.kernel(wanted)] if wanted else tu.kernels
    if not kernels:
        raise InputError(f"{file} defines no kernel (no .entry in its PTX); add a __global__ "
                         f"or __kernel function")
    return {"source": file, "language": tu.language, "device": dev.key, "arch": tu.arch,
            "ptx_target": tu.ptx_target, "toolchain": str(tu.toolchain),
            "toolchain_path": tu.toolchain.path, "defines": tu.defines, "notes": tu.notes,
            "kernels": [_kernel_report(k, dev.key, block, corpus_block) for k in kernels]}


def _print(report: dict) -> None:
    console.print(f"[bold]{report['source']}[/] ({report['language']}, {report['toolchain']}) "
                  f"-> PTX {report['ptx_target']}, resources for {report['arch']} on "
                  f"{report['device']}")
    for note in report["notes"]:
        console.print(f"  note: {escape(str(note))}")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                  caption_justify="left",
                  caption="bytes: smem per block, lmem and spills (stores/loads) per thread; "
                  "blocks/SM and occupancy at the block size shown")
    for col in ("kernel", "regs", "smem", "lmem", "spill", "cmem0", "bar", "block", "blk/SM",
                "occ", "limit"):
        table.add_column(col, justify="left" if col in ("kernel", "limit") else "right",
                         min_width=len(col), no_wrap=col in ("kernel", "limit"))
    for k in report["kernels"]:
        r, o = k["resources"], k["occupancy"]
        table.add_row(k["entry"], str(r["registers"]), str(r["shared_static"]), str(r["local"]),
                      f"{r['spill_stores']}/{r['spill_loads']}", str(r["cmem"].get("0", 0)),
                      str(r["barriers"]), str(k["block"]), str(o["blocks_per_sm"]),
                      f"{o['occupancy']:.2f}", o["limiting"])
    console.print(table)
    for k in report["kernels"]:
        _print_analysis(k["entry"], k["analysis"])


def _print_analysis(entry: str, a: dict) -> None:
    loops = ", ".join(f"{lp['header_label'] or lp['header_block']} "
                      f"(depth {lp['depth']}, {lp['blocks']} blocks)"
                      for lp in a["loops"]) or "none"
    console.print(f"[bold]{entry}[/]: {a['instructions']} PTX instructions, {a['blocks']} basic "
                  f"blocks, {a['edges']} edges, {a['conditional_branches']} conditional branches "
                  f"({len(a['divergent_branches'])} possibly divergent); loops: {loops}")
    mix = sorted(a["mix"].items(), key=lambda kv: -kv[1])
    console.print("  static mix: " + ", ".join(f"{cls} {n}" for cls, n in mix if n))


@app.command("inspect")
def inspect_cmd(
    file: Annotated[str, typer.Argument(help="A .cu, .cl or .ptx file, or corpus:NAME.")],
    device: Annotated[str, typer.Option(
        "--device", "-d", help="Device name or alias.")] = DEFAULT_DEVICE,
    define: Annotated[list[str] | None, typer.Option(
        "--define", "-D", help="Macro NAME=VALUE (repeatable).")] = None,
    lang: Annotated[str | None, typer.Option("--lang", help="cuda, opencl or ptx.")] = None,
    block: Annotated[int | None, typer.Option(
        "--block", "-b", help="Threads per block for occupancy (default 256).")] = None,
    kernel: Annotated[str | None, typer.Option("--kernel", "-k", help="Only this kernel.")] = None,
    toolchain: Annotated[str, typer.Option(
        help="auto; nvcc or nvrtc (CUDA); clang or nvidia-opencl (OpenCL).")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
) -> None:
    """Compile a kernel and show its registers, shared/local/constant memory and occupancy.

    Example: kerncast inspect corpus:matmul_tiled --lang opencl --device h100 --json
    """
    with nullcontext() if as_json else console.status("compiling", spinner="dots"):
        report = inspect_source(file, device=device, defines=parse_defines(define), lang=lang,
                                block=block, kernel=kernel, toolchain=toolchain)
    if as_json:
        print_json(report)
    else:
        _print(report)

