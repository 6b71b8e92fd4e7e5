"""The walk-through of docs/python.md runs as written."""
import os
import re

import numpy as np
import pytest
from conftest import REPO

import clusterdyn as cd


def run_section(heading):
    """Runs the first ```python block after `## heading` and returns its variables."""
    doc = (REPO / "docs" / "python.md").read_text()
    block = re.search(r"## " + re.escape(heading) + r"\n.*?```python\n(.*?)```", doc,
                      re.S).group(1)
    cwd = os.getcwd()
    os.chdir(REPO)  # the example loads models/... relative to the repository
    try:
        scope = {}
        exec(compile(block, "docs/python.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    return scope


def test_walkthrough_runs():
    scope = run_section("A walk-through")
    assert abs(scope["tau"][0] - 0.1) < 1e-9
    assert scope["J"].shape == (6, 3) and scope["H"].shape == (1, 1)


@pytest.mark.skipif(not hasattr(cd.lib(), "cdyn_constraint_wrenches"),
                    reason="the library does not export cdyn_constraint_wrenches")
def test_constrained_dynamics_example_runs():
    scope = run_section("Contacts and constrained dynamics")
    r, W = scope["r"], scope["W"]
    assert scope["J"].shape == (12, 18) and scope["D"].shape == (12, 12)
    assert r.converged and r.lam.shape == (12,) and scope["r_cut"].lam.shape == (5,)
    np.testing.assert_allclose(W[:, 5].sum(), 134.0046, rtol=1e-6)  # the weight, m g


def test_constraint_forces_example_runs():
    scope = run_section("Constraint forces")
    assert scope["Wb"].shape == (3, 6) and scope["L"].shape == (1, 6)
    np.testing.assert_allclose(scope["rows"][2:], scope["L"][0, 3:])
    np.testing.assert_allclose(scope["tau_back"], [0.1], atol=1e-12)
    mult, jf = scope["multiplier"], scope["joint_forces"]
    np.testing.assert_allclose(jf, [9 * mult, -mult])
    assert abs(mult) > 1e-3
