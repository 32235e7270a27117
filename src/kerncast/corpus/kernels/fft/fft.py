"""Inputs and NumPy reference for one radix-2 Stockham FFT stage.

A batch of complex float32 signals of length L = 2^log_len, interleaved (re, im),
is transformed by log_len out-of-place radix-2 Stockham stages; stage s (sub-
transforms of size ns = 2^s become size 2 ns) maps butterfly j (0 <= j < L/2) as

    a = in[j], b = in[j + L/2] * exp(-i pi (j mod ns) / ns)
    out[(j div ns) * 2 ns + j mod ns]      = a + b
    out[(j div ns) * 2 ns + j mod ns + ns] = a - b

and needs no bit reversal. Before stage s the data are the length-ns DFTs of the ns
interleaved subsequences x[g + p L/ns]: in[g ns + k] = DFT_ns(x[g + p L/ns])[k],
which the generator computes directly with np.fft. The launch is the middle stage,
s = log_len / 2. The signals are tones in noise; the batch cycles through 16 of them.
"""

import numpy as np

DISTINCT = 16


def _signal(length, rng):
    """Eight tones of random bin, amplitude and phase in complex white noise."""
    n = np.arange(length)
    x = (rng.normal(0, 0.3, length) + 1j * rng.normal(0, 0.3, length)).astype(np.complex64)
    for _ in range(8):
        freq, amp, phase = rng.integers(0, length), rng.uniform(0.2, 1.0), rng.uniform(0, 2 * np.pi)
        angle = (2 * np.pi / length * ((freq * n) % length) + phase).astype(np.float32)
        x.real += np.float32(amp) * np.cos(angle)
        x.imag += np.float32(amp) * np.sin(angle)
    return x


def partial_fft(x, ns):
    """The signal after the stages before the one with sub-transform size ns."""
    return np.fft.fft(x.reshape(ns, x.size // ns).T, axis=1).reshape(-1).astype(np.complex64)


def inputs(kernel, params, rng):
    length, batch = 1 << params["log_len"], params["batch"]
    ns = 1 << (params["log_len"] // 2)
    distinct = [partial_fft(_signal(length, rng), ns) for _ in range(min(batch, DISTINCT))]
    data = np.empty((batch, length), dtype=np.complex64)
    for b in range(batch):
        data[b] = distinct[b % len(distinct)]
    return {"src": data.view(np.float32).reshape(-1)}


def stockham_stage(x, ns):
    """One radix-2 Stockham stage on the rows of x (complex128)."""
    length = x.shape[1]
    j = np.arange(length // 2)
    k = j % ns
    a = x[:, :length // 2]
    b = x[:, length // 2:] * np.exp(-1j * np.pi * k / ns)
    out = np.empty_like(x)
    dest = (j // ns) * 2 * ns + k
    out[:, dest] = a + b
    out[:, dest + ns] = a - b
    return out


def reference(kernel, args, params):
    length, batch = 1 << params["log_len"], params["batch"]
    ns = 1 << (params["log_len"] // 2)
    src = args["src"].view(np.complex64).reshape(batch, length)
    dst = np.empty((batch, length), dtype=np.complex64)
    rows = max(1, (1 << 18) // length)
    for lo in range(0, batch, rows):
        dst[lo:lo + rows] = stockham_stage(src[lo:lo + rows].astype(np.complex128), ns)
    return {"dst": dst.view(np.float32).reshape(-1)}
