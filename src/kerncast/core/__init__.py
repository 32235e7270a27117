"""kerncast.core: the domain model every layer shares.

:class:`Kernel` (a source and how to compile it), :class:`Launch` (geometry and
arguments) and the arguments (:class:`Array`, :class:`Scalar`, :class:`Struct`,
:class:`View`, with named :class:`Generator` s for arrays described without data), and
:class:`Prediction` (what every model answers for a launch). It
imports nothing of kerncast but its errors: the frontend compiles a ``Kernel``, the
emulator runs a ``Launch``, the models predict one, the corpus produces them.
"""

from kerncast.core._args import (ARG_DTYPES, Argument, Array, BufferOffset, Scalar, Struct, View,
                                 as_argument, as_dtype, lazy_zeros)
from kerncast.core._chunked import (CHUNKED_BYTES, Chunked, advanced, chunked_together,
                                    stream_words)
from kerncast.core._jit import jitted
from kerncast.core._permute import permuted, shuffle
from kerncast.core._generators import (GENERATORS, Generator, npy_header, parse_generator,
                                       register_generator)
from kerncast.core._expr import evaluate
from kerncast.core._kernel import COMPILERS, LANGUAGES, Kernel, language_of_suffix
from kerncast.core._launch import MAX_GRID, MAX_INPUT_SETS, MAX_THREADS, Launch, cycled_copies, dims
from kerncast.core._launchfile import (LaunchFile, build_launch, load_launch_file, parse_arg,
                                       parse_args, user_launch)
from kerncast.core._serial import (kernel_from_dict, kernel_to_dict, launch_from_dict,
                                   launch_to_dict)
from kerncast.core._prediction import BREAKDOWN_KEYS, Prediction
from kerncast.core._tuning import DEFAULT_BLOCK_NAMES, Tuning
from kerncast.core._user import UserKernel, language_of

__all__ = [
    "ARG_DTYPES", "BREAKDOWN_KEYS", "CHUNKED_BYTES", "COMPILERS", "DEFAULT_BLOCK_NAMES",
    "GENERATORS", "LANGUAGES", "MAX_GRID", "MAX_INPUT_SETS", "MAX_THREADS", "Argument", "Array",
    "BufferOffset", "Chunked", "Generator", "Kernel", "Launch", "LaunchFile", "Prediction",
    "Scalar", "Struct", "Tuning", "UserKernel", "View", "advanced", "as_argument", "as_dtype",
    "build_launch", "chunked_together", "cycled_copies", "dims", "evaluate", "kernel_from_dict",
    "kernel_to_dict", "language_of", "language_of_suffix", "launch_from_dict", "launch_to_dict", "lazy_zeros",
    "jitted", "load_launch_file", "npy_header", "parse_arg", "parse_args", "parse_generator",
    "permuted", "register_generator", "shuffle", "stream_words", "user_launch",
]
