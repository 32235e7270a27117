"""The options of commands whose work fans out over workers (``sweep``, ``evaluate``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["AddressOpt", "ExecutorOpt", "WorkersOpt", "executor_of"]

ExecutorOpt = Annotated[str, typer.Option(
    "--executor", help="Where the work runs: serial (here), pool (a process per core, or "
                       "--workers), ray (a Ray cluster: --address, or a local one).")]
WorkersOpt = Annotated[int | None, typer.Option(
    help="Worker processes (pool: default every core; ray: CPUs of a local cluster).")]
AddressOpt = Annotated[str | None, typer.Option(
    help="A Ray cluster's address (ray://host:10001, or auto), for --executor ray.")]


def executor_of(name: str, workers: int | None, address: str | None) -> Any:
    """The :mod:`kerncast.execute` executor the options name (checked before any work)."""
    from kerncast.execute import get_executor  # noqa: PLC0415 (light, but only here)

    return get_executor(name, workers=workers, address=address)
