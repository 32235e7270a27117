"""Learned models fitted on a whole dataset and saved, and the ones kerncast ships.

``train(name, dataset)`` fits a learned model on every row of a dataset (for scoring,
``kerncast evaluate`` refits it under cross-validation by kernel instead); ``kerncast
train`` does the same from the command line and writes the JSON that
:meth:`Predictor.save` defines. kerncast ships the models trained on its own datasets
in ``kerncast/models/trained/<model>-<dataset>.json``; :func:`trained_model` loads one.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.models._base import Predictor
from kerncast.models.registry import get_predictor, list_predictors, predictor_class

__all__ = ["shipped_models", "train", "trained_model", "trained_path"]


def train(name: str, dataset: Dataset, **params) -> Predictor:
    """The learned model ``name`` fitted on every row of ``dataset``."""
    if not predictor_class(name).learned:
        learned = ", ".join(n for n in list_predictors() if predictor_class(n).learned)
        raise InputError(f"model {name!r} learns nothing from data, so there is nothing to "
                         f"train; the learned models are: {learned}")
    return get_predictor(name, **params).fit(dataset)


def trained_path(name: str, dataset_name: str) -> Path:
    """Where kerncast keeps the shipped model ``name`` trained on ``dataset_name``."""
    return Path(str(resources.files("kerncast.models") / "trained" / f"{name}-{dataset_name}.json"))


def shipped_models() -> list[str]:
    """``<model>-<dataset>`` of every model kerncast ships."""
    folder = resources.files("kerncast.models") / "trained"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def trained_model(name: str, dataset_name: str = "h100") -> Predictor:
    """The shipped model ``name`` trained on kerncast's ``dataset_name`` dataset."""
    path = trained_path(name, dataset_name)
    if not path.exists():
        have = ", ".join(shipped_models()) or "none"
        raise InputError(f"kerncast ships no {name!r} trained on {dataset_name!r} (it ships: "
                         f"{have}); train one with 'kerncast train {name} --dataset "
                         f"data/{dataset_name}'")
    return Predictor.load(path)
