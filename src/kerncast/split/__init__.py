"""kerncast.split: one kernel launch's grid divided across several devices by what samples
on each predict (the sampling seed's purpose), with the block-offset rewrites that let a
device run a slice of a grid."""

from kerncast.frontend import OFFSET_PARAMS, offset_ptx, opencl_prelude
from kerncast.split._plan import Line, balanced_shares, fit_line, proportional_shares
from kerncast.split._run import Part, SplitResult, split

__all__ = ["OFFSET_PARAMS", "Line", "Part", "SplitResult", "balanced_shares", "fit_line",
           "offset_ptx", "opencl_prelude", "proportional_shares", "split"]
