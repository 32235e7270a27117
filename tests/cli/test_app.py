"""The command table: each command's module is imported only when the command runs."""

from __future__ import annotations

from kerncast.cli import COMMANDS
from tests.fresh import modules_after


def test_the_table_names_every_command_and_the_module_that_adds_it():
    from kerncast.cli import app

    found = {c.name: c.callback.__module__ for c in app.registered_commands}
    for group in app.registered_groups:
        first = group.typer_instance.registered_commands[0]
        found[group.name] = first.callback.__module__
    assert found == {name: f"kerncast.cli.{module}" for name, module in COMMANDS.items()}


def test_a_command_loads_only_its_own_module_and_still_runs():
    loaded = {m for m in modules_after(["split", "--help"]) if m.startswith("kerncast.cli._")}
    assert "kerncast.cli._split" in loaded
    assert not loaded & {"kerncast.cli._measure", "kerncast.cli._evaluate", "kerncast.cli._data"}


def test_a_prediction_for_programs_loads_no_rich_and_no_process_pools():
    loaded = modules_after(["predict", "corpus:copy_vector", "--size", "small", "--device",
                            "h100", "--json"])
    assert "kerncast.sim" in loaded  # it predicted
    assert not loaded & {"rich", "rich.console", "multiprocessing", "kerncast.execute",
                         "statistics"}
