"""clusterdyn against MuJoCo (Todorov, Erez and Tassa 2012), the anchor installed from PyPI
(mujoco), which reads the same URDF files with its own importer: the joint-space mass matrix
(mj_fullM after mj_forward), the bias forces qfrc_bias = C(q, v) v + g(q) and the unconstrained
accelerations qacc on the spanning trees of the bundled models, on the shared *_approximate
robots and on random trees (revolute, prismatic, spherical = MuJoCo ball, floating = MuJoCo
free joint). Coordinates are matched by joint name; MuJoCo's free joint (linear velocity in
world axes, quaternion w x y z) is mapped by anchors_util.MujocoMap. Tolerance 1e-9 relative
to the size of the compared quantity. See docs/anchors.md.

What the two models share: MuJoCo's URDF importer is run with a <mujoco><compiler .../>
extension element in a temporary copy of the text (discardvisual, fusestatic: fixed links are
fused into their parent as clusterdyn does; balanceinertia off, so no inertia is changed).
MuJoCo adds no armature, damping or springs to an imported URDF, so qM and qfrc_bias mean the
same as clusterdyn's M and nonlinear effects. Inertias that violate the triangle inequality
(mini_cheetah_approximate's hip links) are refused by MuJoCo; both libraries then load the same
modified text (anchors_util.balance_inertias). The shared *_approximate robots have neither
rotors nor armature: their link inertias are those of the exact models with the rotor links
deleted (checked against mini_cheetah.urdf). The bundled cd_quadruped_approximate folds each
rotor's reflected inertia into the driven link as an ordinary link inertia (models/README.md),
not as MuJoCo armature. Nothing else needs mapping.
"""
import numpy as np
import pytest

import clusterdyn as cd
from anchors_util import (MujocoMap, balance_inertias, close, mujoco_urdf, random_state,
                          random_tree, tree_urdf)
from conftest import MODELS, shared_dir

mujoco = pytest.importorskip("mujoco", reason="MuJoCo (PyPI package mujoco) is not installed: "
                             "MuJoCo anchor tests skipped")

APPROX = sorted((shared_dir() / "urdfplus").glob("*_approximate.urdf"))
RANDOM = {  # name: (seed, moving links, joint types, floating base)
    "random_revolute": (21, 7, ("revolute",), False),
    "random_mixed": (22, 8, ("revolute", "prismatic", "spherical"), False),
    "random_floating": (23, 8, ("revolute", "prismatic", "spherical"), True),
}


def load_pair(case):
    """(clusterdyn model of the spanning tree, MuJoCo model) from the same URDF text (plus
    MuJoCo's compiler element); returns also the links whose inertia had to be balanced."""
    kind, key = case
    if kind == "random":
        seed, n, types, floating = RANDOM[key]
        text = tree_urdf(random_tree(np.random.default_rng(seed), n, types, floating,
                                     nfixed=2), key)
    else:
        text = key.read_text()
    text, changed = balance_inertias(text)
    model = cd.Model.from_string(text, ignore_constraints=True)
    mj = mujoco.MjModel.from_xml_string(mujoco_urdf(text))
    return model, mj, changed


CASES = ([("bundled", p) for p in MODELS] + [("approx", p) for p in APPROX]
         + [("random", k) for k in RANDOM])
IDS = [c[1] if isinstance(c[1], str) else c[1].stem for c in CASES]
if not APPROX:  # reported as skipped, with the reason
    CASES.append(pytest.param(None, marks=pytest.mark.skip(
        reason=f"{shared_dir()} has no urdfplus/*_approximate.urdf: shared anchor tests skipped")))
    IDS.append("shared_approximate")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mass_matrix_and_bias(case):
    model, mj, changed = load_pair(case)
    if case[0] == "approx" and case[1].stem == "mini_cheetah_approximate":
        assert changed, "mini_cheetah_approximate's inertias were expected to need balancing"
    md = mujoco.MjData(mj)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)  # limits, mimic eq.
    mmap = MujocoMap(model, mj, mujoco)
    ws = model.workspace()
    close(mj.body_mass.sum(), model.total_mass, "total mass")
    rng = np.random.default_rng(99)
    for _ in range(3):
        q, v = random_state(model, ws, rng)
        tau = rng.uniform(-5, 5, model.nv)
        md.qpos[:], md.qvel[:], T, tdv = mmap.state(q, v)
        # Generalized forces: the same power, T^T tau_mj = tau_cd.
        md.qfrc_applied[:] = np.linalg.solve(T.T, tau)
        mujoco.mj_forward(mj, md)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, md, M)
        close(ws.crba(q), T.T @ M @ T, "mass matrix")
        close(ws.nonlinear_effects(q, v), T.T @ (md.qfrc_bias + M @ tdv), "bias forces")
        # qacc = T qdd + Tdot v (MuJoCo's velocity map differentiated along the motion).
        close(T @ ws.aba(q, v, tau) + tdv, md.qacc, "accelerations (ABA)")
