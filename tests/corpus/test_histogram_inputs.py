"""The histogram kernels' image: the measured datasets were taken on exactly these bytes."""

import hashlib

import numpy as np
import pytest

from kerncast.corpus.kernels.histogram import histogram

# sha256 of the scene drawn from default_rng(0), the seed every dataset was measured with
MEASURED = {
    128: "b93a4665ae90f0d2b0137d6d634b818c4b316209e0fcc91c1761df6a585c5f0a",
    2048: "7da10f576e58e649d33a305f325d5cbcf2cd2cca429b01cf679939326f708ffb",
}


@pytest.mark.parametrize("side", sorted(MEASURED))
def test_scene_is_the_measured_image(side):
    scene = histogram._scene(np.random.default_rng(0), side, side)
    assert scene.dtype == np.uint8 and scene.size == side * side
    assert hashlib.sha256(scene.tobytes()).hexdigest() == MEASURED[side]


def test_large_images_repeat_the_scene_with_a_shift_per_copy():
    n = 5 * 2048 * 2048  # at least CHUNK pixels: the 2048 x 2048 scene
    img = histogram.inputs("histo_global", {"n": n}, np.random.default_rng(0))["img"]
    img = img.materialise()  # made a piece at a time
    base = histogram._scene(np.random.default_rng(0), 2048, 2048)
    copies = img.reshape(5, -1)
    shifts = (copies.astype(np.int16) - base).astype(np.uint8)  # wrapped difference
    assert all(np.unique(row).size == 1 for row in shifts)
