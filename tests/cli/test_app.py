"""The command table: each command's module is imported only when the command runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kerncast
from kerncast.cli import COMMANDS


def test_the_table_names_every_command_and_the_module_that_adds_it():
    from kerncast.cli import app

    found = {c.name: c.callback.__module__ for c in app.registered_commands}
    for group in app.registered_groups:
        first = group.typer_instance.registered_commands[0]
        found[group.name] = first.callback.__module__
    assert found == {name: f"kerncast.cli.{module}" for name, module in COMMANDS.items()}


def test_a_command_loads_only_its_own_module_and_still_runs():
    code = (
        "import contextlib, io, sys\n"
        "from kerncast.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['split', '--help']) == 0\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('kerncast.cli._'))))\n"
    )
    src = str(Path(kerncast.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    loaded = set(out.stdout.strip().split(","))
    assert "kerncast.cli._split" in loaded
    assert not loaded & {"kerncast.cli._measure", "kerncast.cli._evaluate", "kerncast.cli._data"}
