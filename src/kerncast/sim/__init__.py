"""kerncast.sim: the warp-pipeline timing model behind the static predictor.

:func:`predict_launch` compiles a kernel, emulates one round of resident blocks
(:mod:`kerncast.emu`), costs its memory requests and simulates the round on a model
of the SM built from the device spec and its calibration (:class:`Machine`), then
scales the round to the whole grid.
"""

from kerncast.sim._machine import Machine, calibrated_devices, machine_for
from kerncast.sim._predict import StaticResult, predict_launch
from kerncast.sim._whatif import FIXES, check_fixes

__all__ = ["FIXES", "Machine", "StaticResult", "calibrated_devices", "check_fixes",
           "machine_for", "predict_launch"]
