"""``predict(..., model="auto")``: the most accurate model the inputs allow, and why."""

from __future__ import annotations

import pytest

import kerncast
from kerncast import InputError
from kerncast.models import _predict
from kerncast.models._predict import accuracy_table


def test_the_shipped_accuracy_tables_rank_models_measured_held_out():
    for device in ("h100", "h200"):
        table = accuracy_table(device)
        assert table["folds"].endswith("by kernel") and table["command"]
        assert table["models"]["static"]["rows"] > 100
        assert all(0 < m["mape_pct"] for m in table["models"].values())


def _fake_table(monkeypatch, models: dict[str, float], rows: int = 30) -> None:
    table = {"dataset": "data/fake", "models": {
        name: {"mape_pct": mape, "rows": rows if name != "mwp-cwp" else 3, "kernels": 5}
        for name, mape in models.items()}}
    monkeypatch.setattr(_predict, "accuracy_table", lambda device: table)


@pytest.mark.toolchain
def test_auto_passes_over_the_models_the_inputs_cannot_serve_and_says_why(monkeypatch):
    # a dataset-only model ranked first, then static
    # mwp-cwp's 3 launches rank it after the rest
    _fake_table(monkeypatch, {"mwp-cwp": 0.5, "components": 1.0, "static": 20.0})
    p = kerncast.predict("corpus:copy_vector", size="small", model="auto")
    assert p.model == "static" and p.seconds > 0
    assert "static: the lowest held-out MAPE (20.0% over 30 launches" in p.based_on["chosen"]
    assert len(p.based_on["passed_over"]) == 1
    assert p.based_on["passed_over"][0].startswith("components (1.0%): ")


def test_auto_with_no_model_the_inputs_allow_names_each_reason(monkeypatch):
    _fake_table(monkeypatch, {"components": 1.0, "xapp": 2.0})
    with pytest.raises(InputError, match=r"no model can predict.*components.*xapp"):
        kerncast.predict("corpus:copy_vector", size="small", model="auto")
