"""Reading launches out of rows of a ``times`` table."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, LaunchConfig, get_kernel

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["corpus_launch", "per_row", "tunables_of"]


def tunables_of(row: Mapping[str, Any]) -> dict[str, int]:
    """The row's tunables (a JSON string in the table; a dict is accepted too)."""
    raw = row.get("tunables")
    if raw is None or (isinstance(raw, float) and raw != raw) or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return {str(k): int(v) for k, v in raw.items()}
    try:
        value = json.loads(raw)
    except (TypeError, json.JSONDecodeError):
        raise InputError(f"row of {row.get('kernel')}: tunables {raw!r} is not JSON; "
                         "the dataset is damaged") from None
    return {str(k): int(v) for k, v in value.items()}


def corpus_launch(row: Mapping[str, Any]) -> tuple[CorpusKernel, LaunchConfig]:
    """The corpus kernel and launch configuration a ``times`` row measured."""
    kernel = get_kernel(str(row["kernel"]))
    return kernel, kernel.launch(str(row["size"]), tunables_of(row))


def per_row(times: pd.DataFrame, record: Callable[[dict], dict],
            errors: tuple[type[Exception], ...]) -> tuple[pd.DataFrame, list[str]]:
    """``record(row)`` for every row of ``times`` (an empty record where it raises one of
    ``errors``) as a frame on the same index, and the reason per row ("" where none)."""
    records, reasons = [], []
    for row in times.to_dict("records"):
        try:
            records.append(record(row))
            reasons.append("")
        except errors as exc:
            records.append({})
            reasons.append(str(exc))
    import pandas as pd  # noqa: PLC0415 (the static model predicts launches without pandas)

    return pd.DataFrame(records, index=times.index), reasons
