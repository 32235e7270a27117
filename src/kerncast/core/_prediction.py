"""What every model answers: :class:`Prediction`, a predicted time with its explanation."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BREAKDOWN_KEYS", "Prediction"]

#: Parts of a predicted time that :class:`Prediction.breakdown` may name.
BREAKDOWN_KEYS = ("compute", "memory", "latency", "synchronisation", "launch")


@dataclass(frozen=True)
class Prediction:
    """One predicted time with its explanation.

    Parameters
    ----------
    seconds
        The predicted kernel time.
    model
        Registry name of the model that made it.
    breakdown
        Seconds attributed to ``compute``, ``memory``, ``latency``, ``synchronisation``
        and ``launch`` (any subset; the parts may overlap, as in a roofline's max).
    bottleneck
        The part that limits the kernel (one of the breakdown keys, or ``"unknown"``).
    based_on
        What the prediction used: work source, device, SM count, peaks, ...
    """

    seconds: float
    model: str
    breakdown: dict[str, float] = field(default_factory=dict)
    bottleneck: str = "unknown"
    based_on: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.breakdown) - set(BREAKDOWN_KEYS)
        if unknown:
            raise ValueError(f"breakdown keys {sorted(unknown)} are not among {BREAKDOWN_KEYS}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
