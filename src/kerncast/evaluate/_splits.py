"""Cross-validation folds by kernel: no kernel has rows on both sides of a split."""

from __future__ import annotations

from dataclasses import dataclass

from kerncast._errors import InputError

__all__ = ["Fold", "kernel_folds"]


@dataclass(frozen=True)
class Fold:
    """One split: fit on ``train`` kernels, predict ``test`` kernels."""

    name: str
    train: tuple[str, ...]
    test: tuple[str, ...]


def kernel_folds(kernels: list[str], folds: str | int = "kernel") -> list[Fold]:
    """Split ``kernels`` into folds.

    Parameters
    ----------
    kernels
        Kernel names (each kernel's rows stay together).
    folds
        ``"kernel"``: leave one kernel out (one fold per kernel); an integer ``k >= 2``:
        ``k`` folds, kernel ``i`` of the sorted names in fold ``i mod k`` (``k`` is
        capped at the number of kernels).

    Raises
    ------
    InputError
        For another value of ``folds``.
    """
    names = sorted(set(kernels))
    if folds == "kernel":
        return [Fold(f"without {k}", tuple(n for n in names if n != k), (k,)) for k in names]
    try:
        count = int(folds)
    except (TypeError, ValueError):
        count = 0
    if count < 2 or str(count) != str(folds).strip():
        raise InputError(f"folds must be 'kernel' (leave one kernel out) or a whole number "
                         f"of folds of at least 2, not {folds!r}")
    count = min(count, len(names))
    groups = [tuple(names[i::count]) for i in range(count)]
    return [Fold(f"fold {i + 1}/{count}", tuple(n for n in names if n not in g), g)
            for i, g in enumerate(groups) if g]
