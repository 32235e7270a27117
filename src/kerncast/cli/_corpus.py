"""``kerncast corpus list`` and ``kerncast corpus show``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from kerncast.cli._app import app
from kerncast.cli._output import console, print_json
from kerncast.corpus import CorpusKernel, get_kernel, list_applications, list_kernels

corpus_app = typer.Typer(help="The kernels kerncast learns from and is tested on.\n\n"
                         "Example: kerncast corpus show matmul_tiled")
app.add_typer(corpus_app, name="corpus")

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]


def describe(kernel: CorpusKernel) -> dict:
    """A JSON-ready summary of one corpus kernel."""
    spec = kernel.spec
    return {
        "name": kernel.name,
        "application": kernel.app.name,
        "category": kernel.app.spec.category,
        "entry": kernel.entry,
        "description": spec.description,
        "languages": kernel.languages,
        "tags": spec.tags,
        "sizes": {name: kernel.size_params(name) for name in spec.sizes},
        "tunables": spec.tunables,
        "defaults": spec.defaults,
        "restrictions": spec.restrictions,
        "launch_configs": len(kernel.tunable_space()),
        "args": [a.model_dump(exclude_none=True) for a in spec.args],
        "launch": spec.launch.model_dump(exclude_none=True),
        "c_version": kernel.c_path.name,
        "roi": spec.roi,
    }


@corpus_app.command("list")
def list_cmd(as_json: JsonOpt = False) -> None:
    """List every corpus kernel with its languages, sizes and launch space.

    Example: kerncast corpus list --json
    """
    kernels = list_kernels()
    if as_json:
        apps = list_applications()
        print_json({"applications": len(apps), "kernels": [describe(k) for k in kernels],
                    "launch_configs_at_largest_size": sum(len(k.tunable_space()) for k in kernels)})
        return
    table = Table(title=f"{len(kernels)} kernels from {len(list_applications())} applications",
                  title_justify="left")
    for col in ("kernel", "application", "category", "languages", "sizes", "configs"):
        table.add_column(col, justify="right" if col == "configs" else "left")
    for k in kernels:
        sizes = " / ".join(",".join(f"{v}" for v in k.spec.sizes[s].values()) for s in k.spec.sizes)
        table.add_row(k.name, k.app.name, k.app.spec.category, ",".join(k.languages), sizes,
                      str(len(k.tunable_space())))
    console.print(table)


@corpus_app.command("show")
def show_cmd(
    name: Annotated[str, typer.Argument(help="Kernel name, with or without 'corpus:'.")],
    as_json: JsonOpt = False,
) -> None:
    """Show one corpus kernel: arguments, sizes, launch space and files.

    Example: kerncast corpus show corpus:matmul_tiled
    """
    kernel = get_kernel(name)
    info = describe(kernel)
    if as_json:
        print_json(info)
        return
    console.print(f"[bold]{kernel.name}[/] ({kernel.app.name}, {kernel.app.spec.category})")
    console.print(info["description"])
    console.print(f"languages: {', '.join(kernel.languages)}; C version: {info['c_version']}"
                  f" ({info['roi'] or 'no ROI named'})")
    table = Table(title="arguments", title_justify="left")
    for col in ("name", "kind", "dtype", "shape / value", "intent"):
        table.add_column(col)
    for a in kernel.spec.args:
        table.add_row(a.name, a.kind, a.dtype, str(a.shape if a.kind == "buffer" else a.value),
                      a.intent or "")
    console.print(table)
    for size, params in info["sizes"].items():
        cfg = kernel.launch(size)
        console.print(f"size {size}: {params}; default launch grid {cfg.grid} block {cfg.block}")
    console.print(f"tunables: {kernel.spec.tunables or 'none'} (default {kernel.spec.defaults}); "
                  f"{info['launch_configs']} launch configurations")
    if kernel.spec.restrictions:
        console.print(f"restrictions: {'; '.join(kernel.spec.restrictions)}")
