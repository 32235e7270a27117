"""The on-disk cache of compiled PTX and ptxas resource reports.

Layout (one JSON file per entry, written atomically: a temporary file in the same
directory, then ``os.replace``)::

    $KERNCAST_CACHE  (default ~/.cache/kerncast/frontend)
      v1/
        ptx/<k[:2]>/<k>.json      PTX + toolchain of one (source, language, arch,
                                  defines, options, toolchain version)
        ptxas/<k[:2]>/<k>.json    per-kernel resources of one (PTX, arch, ptxas version)
        tools/<k[:2]>/<k>.json    a tool's version string, by (path, size, mtime)

``k`` is the SHA-256 of the canonical JSON of the key. Each entry repeats its key;
an entry that cannot be read, is not valid JSON or holds another key is ignored
and rebuilt. A cache that cannot be written is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_root", "digest", "load", "store"]

LAYOUT = "v1"


def cache_root() -> Path:
    """``$KERNCAST_CACHE`` if set, else ``~/.cache/kerncast/frontend``."""
    env = os.environ.get("KERNCAST_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "kerncast" / "frontend"


def digest(key: dict[str, Any]) -> str:
    """SHA-256 of the key's canonical JSON."""
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _path(kind: str, key: dict[str, Any]) -> Path:
    k = digest(key)
    return cache_root() / LAYOUT / kind / k[:2] / f"{k}.json"


def holds(kind: str, key: dict[str, Any]) -> bool:
    """Whether a value is stored under ``key`` (without reading it: one that :func:`load`
    finds corrupt or stale counts)."""
    return _path(kind, key).is_file()


def load(kind: str, key: dict[str, Any]) -> dict[str, Any] | None:
    """The value stored under ``key``, or ``None`` when absent, corrupt or stale."""
    path = _path(kind, key)
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != json.loads(json.dumps(key, default=str)):
        return None
    value = entry.get("value")
    return value if isinstance(value, dict) else None


def store(kind: str, key: dict[str, Any], value: dict[str, Any]) -> None:
    """Write ``value`` under ``key`` atomically; give up quietly if the disk refuses."""
    path = _path(kind, key)
    text = json.dumps({"key": key, "value": value}, default=str)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return
