"""``kerncast new``: a commented launch file and kernel to start from."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console

TEMPLATES = ("kernel.cu", "launch.toml")


@app.command("new")
def new_cmd(
    directory: Annotated[Path, typer.Argument(help="Where to write kernel.cu and launch.toml.")],
) -> None:
    """Write a commented launch file and an example kernel to edit into your own.

    Example: kerncast new mykernel && kerncast predict mykernel/launch.toml
    """
    if directory.exists() and not directory.is_dir():
        raise InputError(f"{directory} is a file; name a directory to write the template into")
    taken = [n for n in TEMPLATES if (directory / n).exists()]
    if taken:
        raise InputError(f"{directory / taken[0]} exists; kerncast new writes only new files: "
                         "choose another directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name in TEMPLATES:
            text = resources.files("kerncast.templates").joinpath(name).read_text()
            (directory / name).write_text(text)
    except OSError as exc:
        raise InputError(f"cannot write into {directory} ({exc.strerror})") from None
    console.print(f"wrote {directory / 'kernel.cu'} and {directory / 'launch.toml'}; next: "
                  f"kerncast predict {directory / 'launch.toml'}")
