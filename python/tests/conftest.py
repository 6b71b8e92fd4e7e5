"""Shared fixtures of the clusterdyn Python tests.

Environment (set by the ctest test python_pytest; all optional):
  CLUSTERDYN_LIBRARY     the libclusterdyn.so.0 to test (else the package's own lookup)
  CLUSTERDYN_SHARED_DIR  the shared/ folder with reference/ and urdfplus/ (else <repo>/../shared)
  CLUSTERDYN_CLI         the clusterdyn command-line tool (tests comparing with it skip without)
"""
import os
import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import clusterdyn as cd  # noqa: E402

MODELS = sorted((REPO / "models").glob("*.urdf"))
LOOP_MODELS = [p for p in MODELS if p.stem in ("cd_four_bar", "cd_six_bar", "cd_quadruped",
                                               "cd_belt_leg", "cd_differential")]

cd.set_log_level("off")


def shared_dir():
    env = os.environ.get("CLUSTERDYN_SHARED_DIR")
    return pathlib.Path(env) if env else REPO.parent / "shared"


@pytest.fixture(params=MODELS, ids=[p.stem for p in MODELS])
def model_path(request):
    return request.param


@pytest.fixture
def model(model_path):
    m = cd.Model.load(model_path)
    yield m
    m._free_batch_resources()


def random_closed_state(model, ws, rng, spread=0.2):
    """A random closed spanning state (q, v): the reference configuration moved by a random
    velocity, projected onto the loop constraints (drawn again when a loop cannot close)."""
    q0 = model.reference_configuration()
    for _ in range(100):
        q = ws.integrate(q0, spread * rng.uniform(-1, 1, model.nv), 1.0)
        try:
            return ws.project_to_constraints(q, rng.uniform(-1, 1, model.nv))
        except cd.ClusterdynError:
            continue
    raise RuntimeError("no closed state found")
