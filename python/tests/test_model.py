"""Loading, sizes, names and structure queries; agreement with the C++ command-line tool."""
import json
import os
import subprocess

import numpy as np
import pytest

import clusterdyn as cd
from conftest import MODELS


def test_version():
    major, minor, patch = (int(x) for x in cd.version().split("."))
    assert (major, minor) == (0, 2)
    assert cd.lib().cdyn_version() == major * 10000 + minor * 100 + patch


def test_sizes_and_names(model):
    assert len(model.position_names) == model.nq
    assert len(model.velocity_names) == model.nv
    assert len(model.joint_names) == len(model.body_names) == model.nbodies
    assert len(model.independent_position_names) == model.nyq
    assert len(model.independent_velocity_names) == model.ny
    assert model.ny <= model.nv and model.nyq <= model.nq
    for names, index in ((model.body_names, model.body_index),
                         (model.joint_names, model.joint_index),
                         (model.position_names, model.position_index),
                         (model.velocity_names, model.velocity_index),
                         (model.independent_velocity_names, model.independent_velocity_index)):
        for i, n in enumerate(names):
            assert index[n] == i
    # Independent coordinates are a selection of the spanning ones, by name and by index.
    pidx, vidx = model.independent_indices()
    assert [model.position_names[i] for i in pidx] == list(model.independent_position_names)
    assert [model.velocity_names[i] for i in vidx] == list(model.independent_velocity_names)
    assert all(p < b for b, p in enumerate(model.body_parents))
    assert model.total_mass > 0
    np.testing.assert_array_equal(model.gravity, [0, 0, -9.81])


def test_joint_and_cluster_ranges(model):
    nq = nv = 0
    for j in range(model.nbodies):
        iq, n_q, iv, n_v = model.joint_coordinates(j)
        assert (iq, iv) == (nq, nv)
        nq, nv = nq + n_q, nv + n_v
    assert (nq, nv) == (model.nq, model.nv)
    ny = 0
    for k in range(model.nclusters):
        info, c = model.cluster_info(k), model.cluster_coordinates(model.cluster_names[k])
        assert info["parent"] < k and info["kind"] in cd.CLUSTER_KINDS
        assert c["idx_y"] == ny
        ny += c["ny"]
        for b in range(info["first_body"], info["first_body"] + info["nbodies"]):
            assert model.body_clusters[b] == k
    assert ny == model.ny


def test_texts(model):
    assert model.name in model.describe()
    assert model.describe_clusters().startswith("cluster tree of")
    dot = model.cluster_tree_dot()
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")


def test_limits(model):
    lo, hi = model.position_limits()
    assert lo.shape == hi.shape == (model.nq,) and np.all(lo <= hi)
    assert model.velocity_limits().shape == model.effort_limits().shape == (model.nv,)


def test_from_string_equals_file(model_path):
    a = cd.Model.load(model_path)
    b = cd.Model.from_string(model_path.read_text())
    assert a.position_names == b.position_names and a.nyq == b.nyq
    np.testing.assert_array_equal(a.reference_configuration(), b.reference_configuration())


def test_load_flags():
    path = [p for p in MODELS if p.stem == "cd_four_bar"][0]
    fb = cd.Model.load(path, floating_base=True)
    plain = cd.Model.load(path)
    assert (fb.nq, fb.nv, fb.ny) == (plain.nq + 7, plain.nv + 6, plain.ny + 6)
    tree = cd.Model.load(path, ignore_constraints=True)
    assert tree.ny == tree.nv and tree.nloops == 0
    g = cd.Model.load(path, gravity=[0, 0, -1.62])
    np.testing.assert_array_equal(g.gravity, [0, 0, -1.62])


def test_close_refuses_while_workspaces_exist():
    m = cd.Model.load(MODELS[0])
    ws = m.workspace()
    with pytest.raises(cd.ClusterdynError) as e:
        m.close()
    assert e.value.status == cd.ERR_INVALID_ARGUMENT
    ws.close()
    m.close()
    m.close()  # idempotent


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get("CLUSTERDYN_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("CLUSTERDYN_CLI (the clusterdyn tool) not given: C++ comparison skipped")
    return path


def test_agrees_with_cli_info(cli, model_path):
    """Names, sizes and constant G blocks against the C++ library (clusterdyn info --json)."""
    info = json.loads(subprocess.run([cli, "info", str(model_path), "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    m = cd.Model.load(model_path)
    assert (info["nq"], info["nv"], info["nbodies"]) == (m.nq, m.nv, m.nbodies)
    assert tuple(info["position_names"]) == m.position_names
    assert tuple(info["velocity_names"]) == m.velocity_names
    assert info["total_mass"] == pytest.approx(m.total_mass, abs=1e-12)
    tree = info["cluster_tree"]
    assert (tree["nq_independent"], tree["nv_independent"]) == (m.nyq, m.ny)
    assert tuple(tree["independent_velocity_names"]) == m.independent_velocity_names
    ws = m.workspace()
    G, _ = ws.constraint_matrices(m.reference_configuration(), np.zeros(m.nv))
    for c in info["clusters"]:
        assert c["name"] == m.cluster_names[c["index"]]
        if "G_constant" in c and c["G_constant"]:
            r = m.cluster_coordinates(c["index"])
            block = G[r["idx_v"]:r["idx_v"] + r["nv"], r["idx_y"]:r["idx_y"] + r["ny"]]
            np.testing.assert_allclose(block, np.array(c["G_constant"]), atol=1e-12)


def test_agrees_with_cli_dot(cli, model_path):
    out = subprocess.run([cli, "dot", str(model_path)], check=True, capture_output=True,
                         text=True).stdout
    assert out == cd.Model.load(model_path).cluster_tree_dot()


def test_joint_dynamics_switch_and_gravity_override(tmp_path):
    """An MJCF file's armature enters the spanning mass matrix by default and not with
    joint_dynamics=False (CDYN_LOAD_NO_JOINT_DYNAMICS); the file's <option gravity> is the
    model's gravity unless the caller passes one."""
    path = os.path.join(os.path.dirname(MODELS[0]), "cd_geared_leg.xml")
    full = cd.Model.load(path, ignore_constraints=True)
    rigid = cd.Model.load(path, ignore_constraints=True, joint_dynamics=False)
    q = full.reference_configuration()
    diff = full.workspace().crba(q) - rigid.workspace().crba(q)
    assert np.abs(diff - np.diag(np.diag(diff))).max() == 0  # armature: diagonal only
    assert np.diag(diff).min() >= 0 and np.diag(diff).max() > 0
    text = ('<mujoco><option gravity="0.5 0 -3"/><worldbody><body name="b">'
            '<joint name="j" type="hinge" axis="0 1 0"/>'
            '<inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>'
            '</body></worldbody></mujoco>')
    file_g = tmp_path / "g.xml"
    file_g.write_text(text)
    assert np.allclose(cd.Model.load(str(file_g)).gravity, [0.5, 0, -3])
    assert np.allclose(cd.Model.load(str(file_g), gravity=[0, 0, -1]).gravity, [0, 0, -1])
    assert np.allclose(cd.Model.from_string(text, gravity=[1, 2, 3]).gravity, [1, 2, 3])
