"""CUDA "devices" for the split's tests: the kernel's PTX run by kerncast's emulator, each
launch timed as ``fixed + blocks x per_block`` so that the planning is deterministic."""

from __future__ import annotations

import numpy as np

from kerncast.emu import emulate
from kerncast.measure._backend import Backend, Compiled, Resources
from kerncast.ptx import parse


class EmulatedGPU(Backend):
    """Runs PTX kernels on the emulator; ``per_block_s`` sets how fast it is."""

    name = "emulated"
    language = "cuda"
    kind = "gpu"

    def __init__(self, per_block_s: float = 1e-6, fixed_s: float = 5e-6,
                 shared: int = 110_000, **_):
        self.device_key = "h100-sxm"
        self.sm_count = 1
        self.shared = shared  # bytes of static shared memory: 2 resident blocks by default
        self.l2_bytes = 1 << 20
        self.per_block_s, self.fixed_s = per_block_s, fixed_s
        self.launched: list[tuple[int, ...]] = []

    def compile(self, kernel):
        return Compiled(kernel, {}, kernel, Resources(registers=16, static_shared=self.shared,
                                                      local_bytes=0))

    def upload(self, args):
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}

    def launch(self, compiled, launch, dev_args):
        self.launched.append(tuple(dev_args[n] for n in launch.names[-6:]))
        module = parse(compiled.kernel.text)
        params = [p.name for p in module.kernel(compiled.kernel.name).params]
        result = emulate(module, (launch.grid, launch.block), self.ordered(launch, dev_args),
                         entry=compiled.kernel.name, trace=False)
        for param, name in zip(params, launch.names):
            if param in result.outputs:
                dev_args[name][...] = result.outputs[param].reshape(dev_args[name].shape)

    def synchronize(self):
        pass

    def download(self, dev_args, templates):
        return {name: dev_args[name].copy() for name in templates}

    def write(self, dev, host):
        dev[...] = host

    def time_launch(self, compiled, launch, dev_args, before=None):
        self.launch(compiled, launch, dev_args)
        return self.fixed_s + self.per_block_s * launch.blocks

    def describe(self):
        return {**super().describe(), "device_name": f"emulated ({self.per_block_s:g} s/block)"}


def fast(**options) -> EmulatedGPU:
    return EmulatedGPU(per_block_s=1e-6, **options)


def slow(**options) -> EmulatedGPU:
    return EmulatedGPU(per_block_s=3e-6, **options)


def wide(**options) -> EmulatedGPU:
    """32 resident blocks: a wave of the tests' grids is a large part of them."""
    return EmulatedGPU(per_block_s=1e-6, shared=0, **options)


class EmulatedCPU(EmulatedGPU):
    """A host CPU's speeds: a large fixed cost per launch and a slow block."""

    name = "emulated-cpu"
    kind = "cpu"

    def __init__(self, **options):
        super().__init__(**options)
        self.sm_count = 16  # cores, one block each at a time

    def describe(self):
        return {**super().describe(), "device_name": "emulated CPU"}


def cpu(**options) -> EmulatedCPU:
    return EmulatedCPU(per_block_s=200e-6, fixed_s=500e-6, shared=0, **options)


def cpu_close(**options) -> EmulatedCPU:
    """A CPU only twice as slow per block as ``fast``, with a small fixed cost."""
    return EmulatedCPU(per_block_s=2e-6, fixed_s=5e-6, shared=0, **options)


class OptimisticCPU(EmulatedCPU):
    """A CPU whose timer reports ``1 / understated`` of the time for launches of a few
    blocks, as PoCL's does for a launch of one slice: one slice understates the time of
    many."""

    def __init__(self, understated: float = 5.0, **options):
        super().__init__(**options)
        self.understated = understated

    def time_launch(self, compiled, launch, dev_args, before=None):
        seconds = super().time_launch(compiled, launch, dev_args, before)
        return seconds / self.understated if launch.blocks <= 4 else seconds


def cpu_optimistic(**options) -> OptimisticCPU:
    return OptimisticCPU(per_block_s=20e-6, fixed_s=5e-6, shared=0, **options)


def cpu_faster_on_one_slice(**options) -> OptimisticCPU:
    """Its one slice looks faster than ``fast``'s; many slices are 20 times slower."""
    return OptimisticCPU(understated=10.0, per_block_s=20e-6, fixed_s=5e-6, shared=0,
                         **options)
