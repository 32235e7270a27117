"""The import contract: packages import only the layers below them, and another
package's private modules (``_name``) only where the list below still allows it.

The layer order is the code's own, lowest first (the pipeline in ``docs/DESIGN.md`` is
the data flow: the emulator fills the trace builder, so ``trace`` sits below ``emu``).
``PRIVATE_IMPORTS`` is the debt left from before the rule: an entry may go (import the
name from the package instead), none may be added.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kerncast"

LAYERS = ("ptx", "core", "devices", "corpus", "frontend", "trace", "emu", "calibrate", "sim",
          "data", "tuner", "execute", "measure", "cpu", "models", "split", "evaluate", "cli")

#: Packages that hold files, not code (``kerncast new``'s templates).
RESOURCES = frozenset({"templates"})

PRIVATE_IMPORTS: frozenset[str] = frozenset()


def _imports() -> list[tuple[str, str, str]]:
    """(importing module, its package, imported module) for every kerncast import."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        package = module.split(".")[1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("kerncast."):
                found.append((module, package, node.module))
    return found


def test_every_package_is_in_the_layer_order():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages - RESOURCES == set(LAYERS)


def test_imports_go_down_the_layers():
    upward = []
    for module, package, imported in _imports():
        target = imported.split(".")[1]
        if package in LAYERS and target in LAYERS and \
                LAYERS.index(target) > LAYERS.index(package):
            upward.append(f"{module} imports {imported}")
    assert not upward, "imports that go up the layers: " + "; ".join(upward)


def test_no_new_import_of_another_packages_private_module():
    found = set()
    for module, package, imported in _imports():
        parts = imported.split(".")
        if parts[1] != package and not parts[1].startswith("_") and len(parts) > 2 \
                and parts[2].startswith("_"):
            found.add(f"{module} -> {imported}")
    new = sorted(found - PRIVATE_IMPORTS)
    assert not new, ("import these from the package (add them to its __init__): "
                     + "; ".join(new))
    assert not PRIVATE_IMPORTS - found, ("no longer imported privately, drop from the list: "
                                         + "; ".join(sorted(PRIVATE_IMPORTS - found)))
