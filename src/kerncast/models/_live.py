"""Sampled runs taken live for a launch-level prediction (the models that need them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kerncast._errors import InputError
from kerncast.models._base import LaunchInputs, Prediction

__all__ = ["all_ok", "sampled", "stamp"]


def all_ok(rows: list[dict], what: str) -> list[dict]:
    """``rows``, or an error naming ``what`` and the first failure among them."""
    bad = [r for r in rows if r.get("status") != "ok"]
    if bad:
        raise InputError(f"{what} failed ({bad[0]['status']}): {bad[0].get('error', '')}")
    return rows


def sampled(inputs: LaunchInputs, choose: Callable | None = None) -> list[dict]:
    """The launch's sampled runs on the driver's backend (those ``choose`` asks for, or the
    whole ladder), every one ok."""
    from kerncast.measure import measure_samples  # noqa: PLC0415 (measure on use)

    if inputs.backend is None or inputs.job is None:
        raise InputError("this model needs sampled runs: predict with a measurement backend "
                         "(--backend cupy on an NVIDIA GPU, pocl on this CPU)")
    return all_ok(measure_samples(inputs.backend, inputs.job, choose=choose),
                  f"sampled runs of {inputs.job.name}")


def stamp(prediction: Prediction, inputs: LaunchInputs, rows: list[dict],
          launch: Any) -> Prediction:
    """``prediction`` with the backend, device, runs and configuration it rests on."""
    prediction.based_on["backend"] = inputs.backend.name
    prediction.based_on["device"] = inputs.backend.device_key
    prediction.based_on["sampled_runs"] = len(rows)
    prediction.based_on["configuration"] = launch.label()
    return prediction
