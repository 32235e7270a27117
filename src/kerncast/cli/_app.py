"""The Typer application that every command module adds itself to."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="kerncast",
    help=(
        "Predict how fast a GPU kernel runs, how it scales and why.\n\n"
        "Example: kerncast occupancy --device h100 --block 256 --regs 32 --smem 0"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
