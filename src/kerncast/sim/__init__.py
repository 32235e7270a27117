"""kerncast.sim: the warp-pipeline timing model behind the static predictor.

:func:`predict_launch` compiles a kernel, emulates one round of resident blocks
(:mod:`kerncast.emu`), costs its memory requests and simulates the round on a model
of the SM built from the device spec and its calibration (:class:`Machine`), then
scales the round to the whole grid.
"""

from kerncast.sim._inputs import data_dependent, emulation_args
from kerncast.sim._machine import Machine, calibrated_devices, machine_for
from kerncast.sim._predict import (MEMORY_BUDGET, StaticResult, assemble_sass, cached_program,
                                   cached_unit, check_fits, choose_blocks, predict_launch)
from kerncast.sim._whatif import FIXES, check_fixes

__all__ = ["FIXES", "MEMORY_BUDGET", "Machine", "StaticResult", "assemble_sass", "cached_program",
           "cached_unit", "calibrated_devices", "check_fits", "check_fixes", "choose_blocks",
           "data_dependent", "emulation_args", "machine_for", "predict_launch"]
