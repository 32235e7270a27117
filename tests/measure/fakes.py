"""A fake GPU backend for the harness's tests: buffers in NumPy, kernels by their reference.

``FakeBackend`` "runs" a kernel by applying the corpus reference to the current device
buffers, so inout buffers accumulate unless restored, exactly as on a GPU. Behaviours
per kernel (or ``kernel:config``) come from the constructor or the ``KC_FAKE``
environment variable (JSON), so that campaign workers in child processes see them:
``compile_error``, ``launch_error``, ``wrong``, ``unwritten``, ``hang``, ``crash``.
``KC_FAKE_SLEEP`` adds a sleep (seconds) to every timed launch.
"""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np

import dataclasses
from functools import cache

from pathlib import Path

from kerncast.corpus._spec import load_application
from kerncast.corpus._data import module_of, params_of
from kerncast.devices import get_device
from kerncast.measure._backend import Backend, CompileError, Compiled, LaunchError, Resources

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


@cache
def _application(directory: str) -> dict:
    if not (Path(directory) / "spec.toml").is_file():
        return {}  # one's own kernel, not a corpus application
    app = load_application(Path(directory))
    return {(str(k.source_path(lang)), k.entry): k for k in app.kernels for lang in k.languages}


def _corpus_kernel(kernel):
    """The corpus kernel (shipped, or of a test corpus) whose source and entry ``kernel`` is."""
    if kernel.path is None:
        return None
    return _application(str(kernel.path.parent)).get((str(kernel.path), kernel.name))


def corpus_of(kernel, launch):
    """The corpus kernel and launch configuration a compiled kernel and launch came from
    (the configuration's grid is the launch's: a sample runs fewer blocks)."""
    corpus = _corpus_kernel(kernel)
    if corpus is None:  # one's own kernel: the fake runs it as a kernel that writes nothing
        return None, None
    config = corpus.launch(launch.size, dict(launch.params))
    return corpus, dataclasses.replace(config, grid=tuple(launch.grid[:len(config.grid)]))


class FakeBackend(Backend):
    name = "fake"
    language = "cuda"
    kind = "gpu"

    def __init__(self, device=None, sm_count=None, behaviours=None, times=None,
                 memory=(8 << 30, 16 << 30), language=None):
        self.device_key = get_device(device or "h100").key
        self.sm_count = int(sm_count or 132)
        self.l2_bytes = 50 * (1 << 20)
        self.behaviours = behaviours if behaviours is not None else \
            json.loads(os.environ.get("KC_FAKE", "{}"))
        self.language = language or os.environ.get("KC_FAKE_LANGUAGE", "cuda")
        self.times = list(times) if times else None
        self.sleep = float(os.environ.get("KC_FAKE_SLEEP", "0"))
        limit = os.environ.get("KC_FAKE_MEMORY")
        self.memory = (int(limit), int(limit)) if limit else memory
        self.events: list[str] = []
        self.launches = 0

    def _behaviour(self, kernel, label: str | None = None) -> str:
        return self.behaviours.get(f"{kernel.name}:{label}",
                                   self.behaviours.get(kernel.name, "ok"))

    def compile(self, kernel):
        if self._behaviour(kernel) == "compile_error" or any(
                value == "compile_error" and self._built_for(kernel, key)
                for key, value in self.behaviours.items()):
            raise CompileError(f"fake compiler: {kernel.name} does not compile")
        self.events.append("compile")
        return Compiled(kernel, dict(kernel.defines), kernel,
                        Resources(registers=32, static_shared=0, local_bytes=0,
                                  max_threads_per_block=1024))

    @staticmethod
    def _built_for(kernel, key: str) -> bool:
        """Whether ``kernel`` is the build of the corpus configuration ``name:label``."""
        name, _, label = key.partition(":")
        corpus = _corpus_kernel(kernel)
        if corpus is None or corpus.name != name or not label:
            return False
        tunables = {k: int(v) for k, v in (p.split("=") for p in label.split(","))}
        return any(corpus.launch(size, tunables).defines == kernel.defines
                   for size in corpus.spec.sizes)

    def upload(self, args):
        self.events.append("upload")
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}

    def launch(self, compiled, launch, dev_args):
        kernel, config = corpus_of(compiled.kernel, launch)
        behaviour = self._behaviour(kernel or compiled.kernel, launch.label())
        self.events.append("launch")
        self.launches += 1
        if behaviour == "hang":
            time.sleep(3600)
        if behaviour == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if behaviour == "launch_error":
            raise LaunchError("fake driver: CUDA_ERROR_ILLEGAL_ADDRESS")
        if behaviour == "unwritten" or kernel is None:
            return
        result = module_of(kernel).reference(kernel.name, dev_args, params_of(kernel, config))
        for name, value in result.items():
            value = np.asarray(value).reshape(-1)
            if behaviour == "wrong":
                value = value + 1
            dev_args[name][...] = value.astype(dev_args[name].dtype)

    def synchronize(self):
        self.events.append("sync")

    def download(self, dev_args, templates):
        return {name: dev_args[name].copy() for name in templates}

    def write(self, dev, host):
        dev[...] = host

    def copy(self, dst, src):
        self.events.append("restore")
        dst[...] = src

    def memory_info(self):
        return self.memory

    def time_launch(self, compiled, config, dev_args, before=None):
        if before is not None:
            before()
        self.events.append("spin")
        self.launch(compiled, config, dev_args)
        if self.sleep:
            time.sleep(self.sleep)
        if self.times:
            return self.times.pop(0) if len(self.times) > 1 else self.times[0]
        return 1e-5 * (1 + 0.001 * (self.launches % 3))

    def flush_l2(self, writes=None):
        self.events.append("flush")

    def describe(self):
        return {"device_name": "Fake GPU", "driver_version": "0.0-fake",
                "runtime_version": "0.0", "backend": "fake",
                "tool_versions": {"fake": "1",
                                  "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", "")}}
