"""Passive CartPole drawn as images (``cartpole-pixels``): one frame, no velocities."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.lab.similarity.gym_suite import PIXELS_SHAPE, cartpole_pixels, render_cartpole

RNG = np.random.default_rng(3)
STATES = [np.array([RNG.uniform(-2.4, 2.4), RNG.normal(), RNG.uniform(-0.2, 0.2), RNG.normal()])
          for _ in range(6)]  # fmt: skip


@pytest.mark.parametrize("obs", STATES)
def test_an_image_shows_position_and_angle_but_no_velocity(obs: np.ndarray) -> None:
    img = render_cartpole(obs)
    assert img.shape == (PIXELS_SHAPE[0] * PIXELS_SHAPE[1],)
    assert img.min() >= 0.0 and img.max() <= 1.0 and img.sum() > 0
    moved = obs.copy()
    moved[[1, 3]] += (5.0, -3.0)  # other velocities, same frame
    assert np.array_equal(render_cartpole(moved), img)
    tilted = obs.copy()
    tilted[2] += 0.05
    assert not np.array_equal(render_cartpole(tilted), img)  # a sub-pixel tilt still shows


@pytest.mark.parametrize("theta", [0.01, 0.07, 0.19])
def test_a_centred_cart_is_drawn_mirror_symmetrically(theta: float) -> None:
    right = render_cartpole(np.array([0.0, 0.0, theta, 0.0])).reshape(PIXELS_SHAPE)
    left = render_cartpole(np.array([0.0, 0.0, -theta, 0.0])).reshape(PIXELS_SHAPE)
    assert np.allclose(left, right[:, ::-1])


def test_pixels_are_the_passive_states_labels_deterministically() -> None:
    from pipeline.lab.similarity.gym_suite import cartpole_passive

    x, y = cartpole_pixels(40, seed=5)
    x2, y2 = cartpole_pixels(40, seed=5)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)
    assert np.array_equal(y, cartpole_passive(40, seed=5)[1])
