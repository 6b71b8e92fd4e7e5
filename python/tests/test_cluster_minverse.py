"""H^-1 by the recursion on the cluster tree (cdyn_cluster_minverse, Model.cluster_minverse,
Model.cluster_minverse_batch; docs/derivatives.md eq. C11-C13): equal to numpy's inverse of the
cluster mass matrix on loop robots, to the Cholesky H^-1 of the CE-ABA derivatives, the batch
bit-identical to single calls in both layouts, with joint dynamics (armature: H = G^T (M + A) G) and
multi-dof joints inside loops."""
import numpy as np
import pytest

import clusterdyn as cd
from conftest import REPO, random_closed_state, shared_dir

MINI_CHEETAH = shared_dir() / "urdfplus" / "mini_cheetah.urdf"
CASES = [REPO / "models" / "cd_four_bar.urdf", REPO / "models" / "cd_quadruped.urdf",
         REPO / "models" / "cd_belt_leg.urdf", REPO / "models" / "cd_differential.urdf",
         pytest.param(MINI_CHEETAH, marks=pytest.mark.skipif(
             not MINI_CHEETAH.is_file(), reason=f"{MINI_CHEETAH} is absent"))]


def rel_err(a, b):
    return float(np.abs(a - b).max()) / max(1.0, float(np.abs(b).max()))


@pytest.mark.parametrize("path", CASES, ids=lambda p: getattr(p, "stem", str(p)))
def test_equals_the_inverse_of_the_mass_matrix(path):
    model = cd.Model.load(path)
    ws = model.workspace()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, v = random_closed_state(model, ws, rng)
        Hinv = model.cluster_minverse(q)
        assert Hinv.shape == (model.ny, model.ny)
        H = ws.cluster_mass_matrix(q)
        assert rel_err(Hinv, np.linalg.inv(H)) <= 1e-9
        np.testing.assert_array_equal(Hinv, Hinv.T)  # both triangles
        chol = model.ce_aba_derivatives(q, v, np.zeros(model.ny))[2]
        assert rel_err(Hinv, chol) <= 1e-9


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("which", ["cluster_minverse", "minverse"])
def test_batch_equals_single_calls(order, which):
    """cdyn_batch_cluster_minverse (H^-1, ny) and cdyn_batch_minverse (the spanning tree's M^-1,
    nv): bit-identical to single calls in both layouts, failures name the state."""
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    ws = model.workspace()
    rng = np.random.default_rng(5)
    batch, single = getattr(model, which + "_batch"), getattr(model, which)
    N, n = 5, model.ny if which == "cluster_minverse" else model.nv
    Q = np.asarray([random_closed_state(model, ws, rng)[0] for _ in range(N)], order=order)
    fresh = batch(Q, threads=2)
    assert fresh.shape == (N, n, n)
    assert (fresh.flags.f_contiguous if order == "F" else
            fresh.transpose(0, 2, 1).flags.c_contiguous)
    out = (np.full((N, n, n), np.nan, order="F") if order == "F" else
           np.full((N, n, n), np.nan).transpose(0, 2, 1))
    got = batch(Q, threads=1, out=out)
    assert got is out
    np.testing.assert_array_equal(got, fresh)
    for i in range(N):
        np.testing.assert_array_equal(fresh[i], single(Q[i]))
    if which == "minverse":
        assert rel_err(fresh[0], np.linalg.inv(ws.crba(Q[0]))) <= 1e-9
    with pytest.raises(ValueError, match="out must be"):
        batch(Q, out=np.zeros((N, n, n + 1)))
    bad = np.array(Q)
    bad[3, 0] = np.nan
    with pytest.raises(cd.ClusterdynError) as e:
        batch(bad, threads=2)
    assert e.value.status == cd.ERR_NON_FINITE and "state 3" in str(e.value)


def test_multi_dof_loops_and_joint_dynamics():
    # A multi-dof joint inside a loop (the RSU leg's ball joints): the recursion covers it.
    model = cd.Model.load(REPO / "models" / "cd_rsu_leg.urdf")
    ws = model.workspace()
    q, _ = random_closed_state(model, ws, np.random.default_rng(1))
    assert rel_err(model.cluster_minverse(q), np.linalg.inv(ws.cluster_mass_matrix(q))) <= 1e-9
    # Joint dynamics (the rotors' armature of an MJCF file, geared by joint equalities): the
    # inverse of H = G^T (M + A) G, which differs from the rigid model's.
    path = REPO / "models" / "cd_geared_leg.xml"
    inverses = []
    for joint_dynamics in (True, False):
        model = cd.Model.load(path, joint_dynamics=joint_dynamics)
        ws = model.workspace()
        q, _ = random_closed_state(model, ws, np.random.default_rng(2))
        inverses.append(model.cluster_minverse(q))
        assert rel_err(inverses[-1], np.linalg.inv(ws.cluster_mass_matrix(q))) <= 1e-9
    assert rel_err(inverses[0], inverses[1]) > 1e-3
