"""The ``kerncast`` command line (Typer + Rich).

Each command lives in its own module and adds itself to :data:`app`. Exit codes:
0 success, 1 a failure (a run crashed, a toolchain is missing), 2 bad input
(Typer's own usage errors included).
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import NoReturn

from kerncast._errors import KerncastError
from kerncast.cli._app import app as _app
from kerncast.cli._output import err_console, print_json

__all__ = ["COMMANDS", "app", "error_object", "load_commands", "main", "run"]

#: The module that adds each top-level command, in the order of ``kerncast --help``. A
#: command's module is imported only when it runs (each imports what it needs: a static
#: prediction need not load the measurement or evaluation commands); help, an unknown
#: command and ``kerncast.cli.app`` import them all.
COMMANDS = {
    "calibrate": "_calibrate", "corpus": "_corpus", "data": "_data", "devices": "_devices",
    "occupancy": "_devices", "evaluate": "_evaluate", "report": "_evaluate",
    "explain": "_explain", "inspect": "_inspect", "measure": "_measure", "new": "_new",
    "speedup": "_speedup", "split": "_split", "predict": "_predict", "sweep": "_predict",
    "scale": "_scale", "train": "_train",
}


def load_commands(names: list[str] | None = None) -> None:
    """Import the modules of the commands ``names`` (all of them by default): each module
    adds its commands to the application."""
    wanted = COMMANDS if names is None else {n: COMMANDS[n] for n in names}
    for module in dict.fromkeys(wanted.values()):
        import_module(f"{__name__}.{module}")


def __getattr__(name: str) -> object:
    if name == "app":  # the whole application, for tests and embedding
        load_commands()
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


try:  # Typer's usage errors: its vendored Click (newer Typer), or Click itself
    from typer._click.exceptions import ClickException as _ClickException
except ImportError:  # pragma: no cover (older Typer)
    from click import ClickException as _ClickException


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` and return its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    load_commands([args[0]] if args and args[0] in COMMANDS else None)
    try:
        # with --json, Typer hands its usage errors back here to be written as JSON
        code = _app(args=args, prog_name="kerncast", standalone_mode=not as_json)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except _ClickException as exc:  # only with --json
        ctx = getattr(exc, "ctx", None)
        print_json({"error": exc.format_message(),
                    "hint": f"see '{ctx.command_path if ctx else 'kerncast'} --help'",
                    "exit_code": exc.exit_code,
                    "kind": "bad input" if exc.exit_code == 2 else "failure"})
        return exc.exit_code
    except KerncastError as exc:
        if as_json:
            print_json(error_object(exc))
        else:
            from rich.text import Text  # noqa: PLC0415 (on use: see cli._output)

            err_console.print(Text.assemble(("error: ", "bold red"), str(exc)))
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    return code if as_json and isinstance(code, int) else 0  # typer.Exit's code


def error_object(exc: KerncastError) -> dict:
    """An error as ``--json`` writes it: what went wrong, and what to do (the part of the
    message after its first semicolon, where it has one)."""
    text = str(exc)
    what, sep, hint = text.partition("; ")
    return {"error": text, "hint": hint if sep else "", "exit_code": exc.exit_code,
            "kind": "bad input" if exc.exit_code == 2 else "failure"}


def run() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
