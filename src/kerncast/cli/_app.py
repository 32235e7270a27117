"""The Typer application that every command module adds itself to."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="kerncast",
    help=(
        "Predict how fast a GPU kernel runs, how it scales and why.\n\n"
        "Example: kerncast predict corpus:matmul_tiled --device h100 --size large"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Always a group of commands: with the modules of the other commands not imported
    (kerncast.cli.COMMANDS), a lone command must not become the whole application."""

