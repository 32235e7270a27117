"""``python -m kerncast`` runs the command line."""

from kerncast.cli import run

run()
