"""The survey's classic models (Madougou et al. 2016, the survey seed).

Each module here defines and registers one or more :class:`kerncast.models.Predictor`;
importing this package imports every module in it, so a new model needs only its file.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
