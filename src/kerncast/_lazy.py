"""Names a package exports without importing their modules until first use, so that
importing the package stays fast and free of optional dependencies."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["LazyNames"]


class LazyNames:
    """The lazy names of ``package``: ``where`` maps each to its module (``_name`` within
    the package, or a full dotted path). A package's module-level ``__getattr__`` and
    ``__dir__`` call :meth:`get` and :meth:`names`; the first use of a name imports its
    module and keeps the value in ``namespace`` (the package's ``globals()``)."""

    def __init__(self, package: str, where: Mapping[str, str], namespace: dict[str, Any]):
        self.package, self.where, self.namespace = package, where, namespace

    def get(self, name: str) -> Any:
        module = self.where.get(name)
        if module is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        path = module if "." in module else f"{self.package}.{module}"
        value = getattr(import_module(path), name)
        self.namespace[name] = value
        return value

    def names(self) -> list[str]:
        return sorted(set(self.namespace) | set(self.where))
