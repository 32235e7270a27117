"""Finding devices by name: the shipped spec files, their aliases, and user files."""

from __future__ import annotations

import difflib
import re
import tomllib
from functools import lru_cache
from pathlib import Path

from kerncast._errors import InputError
from kerncast.devices._spec import Device, load_spec

__all__ = ["SPEC_DIR", "get_device", "list_devices"]

SPEC_DIR = Path(__file__).with_name("specs")


def _normalise(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.strip().lower())


#: Spec files loaded by path in this process, by key: a prediction that resolves the
#: device again by its key (the compiler, the calibration) finds the user's spec.
_LOADED: dict[str, Device] = {}


@lru_cache(maxsize=1)
def _shipped() -> tuple[Device, ...]:
    return tuple(_load_shipped(p) for p in sorted(SPEC_DIR.glob("*.toml")))


@lru_cache(maxsize=None)
def _load_shipped(path: Path) -> Device:
    return load_spec(path)


def _top_level(text: str) -> dict:
    """A spec's top-level keys (``key``, ``name``, ``aliases``...): TOML puts them before
    the first table, so only the text up to the first line opening one is parsed (the
    whole spec where that part does not parse alone)."""
    try:
        return tomllib.loads(text.split("\n[", 1)[0])
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)


@lru_cache(maxsize=1)
def _index() -> dict[str, Path]:
    """Every shipped spec's key, name and aliases (normalised) -> its file. Read from the
    TOML alone, so that resolving one device validates only its own spec."""
    index: dict[str, Path] = {}
    for path in sorted(SPEC_DIR.glob("*.toml")):
        raw = _top_level(path.read_text())
        labels = (raw.get("key", path.stem), raw.get("name", ""), *raw.get("aliases", ()))
        for label in filter(None, labels):
            key = _normalise(str(label))
            other = index.get(key)
            if other is not None and other != path:
                raise InputError(
                    f"device name {label!r} is claimed by both {other.name} and "
                    f"{path.name}; give each alias to one spec only"
                )
            index[key] = path
    return index


def list_devices() -> list[Device]:
    """Every shipped device, ordered by vendor, year and name."""
    return sorted(_shipped(), key=lambda d: (d.vendor, d.year, d.key))


def get_device(name: str | Path | Device) -> Device:
    """Resolve a device by name, alias (case-insensitive) or spec-file path.

    Parameters
    ----------
    name
        ``"h100"``, ``"H100 SXM5 80GB"``, ``"gtx580"``, a path to a ``.toml`` spec,
        or a :class:`Device` (returned as is).

    Raises
    ------
    InputError
        For an unknown name; the message lists the closest known names.
    """
    if isinstance(name, Device):
        return name
    text = str(name)
    if text.endswith(".toml"):
        device = load_spec(text)
        _LOADED[_normalise(device.key)] = device  # later lookups by its key find it
        return device
    found = _LOADED.get(_normalise(text))
    if found is not None:
        return found
    path = _index().get(_normalise(text))
    if path is None:
        raise InputError(_unknown_message(text))
    return _load_shipped(path)


def _unknown_message(text: str) -> str:
    labels = {d.key: d.key for d in _shipped()}
    for dev in _shipped():
        for alias in dev.aliases:
            labels[alias] = dev.key
    normalised = {_normalise(label): label for label in labels}
    close = difflib.get_close_matches(_normalise(text), list(normalised), n=4, cutoff=0.5)
    hint = ", ".join(normalised[c] for c in close)
    suggestion = f"did you mean: {hint}? " if hint else ""
    return (
        f"unknown device {text!r}; {suggestion}run 'kerncast devices' for the full list, "
        f"or pass the path of a spec file (.toml)"
    )
