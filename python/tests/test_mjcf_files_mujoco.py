"""MJCF mesh inertia and <include> against MuJoCo on the same files (docs/mjcf.md).

The meshes are generated here (binary STL, OBJ) into a temporary directory: an off-centre box,
a random tetrahedron, a dimpled (closed, non-convex) cube. Every body hangs on a free joint,
so MuJoCo's mj_fullM reveals its whole spatial inertia (mass, centre of mass, inertia tensor):
compared with clusterdyn's crba to 1e-9 (relative), together with the total mass and the body
poses, for the inertia modes legacy (MuJoCo's default), exact, shell and convex (convex
meshes), scale (mirroring too), refpos / refquat, mass / density, and an <include> tree whose
files are found as MuJoCo finds them.
"""
import os
import struct

import numpy as np
import pytest

import clusterdyn as cd

mujoco = pytest.importorskip("mujoco", reason="the PyPI package 'mujoco' is not installed")

from test_mjcf_mujoco import Pair  # noqa: E402  (the coordinate map clusterdyn <-> MuJoCo)

TOL = 1e-9


def write_stl(path, V, F):
    with open(path, "wb") as f:
        f.write(b" " * 80 + struct.pack("<I", len(F)))
        for t in F:
            f.write(struct.pack("<12fH", 0, 0, 0, *V[t[0]], *V[t[1]], *V[t[2]], 0))


def write_obj(path, V, F, quads=()):
    with open(path, "w") as f:
        for v in np.asarray(V, dtype=np.float32):
            f.write("v %r %r %r\n" % tuple(float(x) for x in v))
        for t in F:
            f.write("f %d %d %d\n" % tuple(i + 1 for i in t))
        for q in quads:
            f.write("f %d/1 %d/1 %d/1 %d/1\n" % tuple(i + 1 for i in q))


def box(lo, hi):
    V = np.array([[hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1],
                   hi[2] if i & 4 else lo[2]] for i in range(8)])
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    return V, quads


def triangles(quads):
    return [t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]


def dimpled_cube(h):
    V, quads = box([-1, -1, -1], [1, 1, 1])
    V = np.vstack([V, [0, 0, h]])
    F = triangles([q for q in quads if q != (4, 5, 7, 6)])
    F += [(4, 5, 8), (5, 7, 8), (7, 6, 8), (6, 4, 8)]
    return V, F


MODEL = """<mujoco model="meshes">
  <compiler angle="radian" meshdir="meshes"/>
  <option><flag contact="disable"/></option>
  <asset>
    <mesh name="box" file="box.stl"/>
    <mesh name="box_obj" file="box.obj" scale="0.5 -1.2 0.8"/>
    <mesh name="tet" file="tet.obj" inertia="exact" refpos="0.1 -0.2 0.05"
          refquat="0.8 0.3 -0.2 0.1"/>
    <mesh name="dimple" file="dimple.stl"/>
    <mesh name="dimple_exact" file="dimple.stl" inertia="exact" scale="0.1 0.2 0.15"/>
    <mesh name="shell" file="box.stl" inertia="shell"/>
    <mesh name="convex" file="box.stl" inertia="convex" scale="2 1 1"/>
  </asset>
  <worldbody>
    <body name="b_box" pos="0 0 1"><freejoint name="f_box"/>
      <geom type="mesh" mesh="box" pos="0.1 0.2 -0.1" quat="0.9 0.1 -0.3 0.2" density="700"/>
      <geom type="capsule" fromto="0 0 0 0.2 0.1 0" size="0.03"/>
    </body>
    <body name="b_obj" pos="1 0 1"><freejoint name="f_obj"/>
      <geom type="mesh" mesh="box_obj" euler="0.3 -0.2 1.1" mass="1.7"/>
    </body>
    <body name="b_tet" pos="2 0 1"><freejoint name="f_tet"/>
      <geom type="mesh" mesh="tet" pos="0 0.05 0" density="2500"/>
    </body>
    <body name="b_dimple" pos="3 0 1"><freejoint name="f_dimple"/>
      <geom type="mesh" mesh="dimple" density="3"/>
      <geom type="mesh" mesh="dimple_exact" pos="0.5 0 0" density="800"/>
    </body>
    <body name="b_shell" pos="4 0 1"><freejoint name="f_shell"/>
      <geom type="mesh" mesh="shell" density="12"/>
    </body>
    <body name="b_convex" pos="5 0 1"><freejoint name="f_convex"/>
      <geom type="mesh" mesh="convex" quat="0.2 0.9 0.1 0.3" density="300"/>
      <geom type="mesh" mesh="box" contype="0" conaffinity="0" group="1" density="200"/>
    </body>
  </worldbody>
</mujoco>
"""


def write_meshes(d):
    os.makedirs(d, exist_ok=True)
    V, quads = box([-0.13, -0.21, -0.047], [0.31, 0.087, 0.153])
    write_stl(os.path.join(d, "box.stl"), V, triangles(quads))
    write_obj(os.path.join(d, "box.obj"), V, [], quads=quads)
    rng = np.random.default_rng(4)
    T = rng.uniform(-0.2, 0.2, (4, 3))
    if np.linalg.det(T[1:] - T[0]) < 0:  # outward faces: (0 2 1), (0 1 3), (0 3 2), (1 2 3)
        T[[1, 2]] = T[[2, 1]]
    write_obj(os.path.join(d, "tet.obj"), T, [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)])
    Vd, Fd = dimpled_cube(-0.5)
    write_stl(os.path.join(d, "dimple.stl"), Vd * 0.1, Fd)


def compare(path, states=3):
    p = Pair(path)
    assert abs(p.cdm.total_mass - p.mjm.body_mass.sum()) < TOL * p.mjm.body_mass.sum()
    rng = np.random.default_rng(1)
    for _ in range(states):
        qpos, qvel = p.random_state(rng)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        q, v, T, tdot = p.to_cd(qpos, qvel)
        H = p.ws.crba(q)
        assert np.abs(T.T @ H @ T - M_mj).max() < TOL * np.abs(M_mj).max()
        bias = T.T @ (p.ws.nonlinear_effects(q, v) + H @ tdot)
        bias_mj = bias_mj - p.mjd.qfrc_passive  # passive forces are in nle (docs/mjcf.md §4)
        assert np.abs(bias - bias_mj).max() < TOL * max(1.0, np.abs(bias_mj).max())
        p.ws.forward_kinematics(q)
        for b in range(1, p.mjm.nbody):
            R, x = p.ws.frame_placement(p.mjm.body(b).name)
            assert np.abs(x - p.mjd.xpos[b]).max() < TOL
    return p


def test_mesh_inertia_matches_mujoco(tmp_path):
    write_meshes(str(tmp_path / "meshes"))
    path = tmp_path / "meshes.xml"
    path.write_text(MODEL)
    p = compare(str(path))
    # the legacy default really differs from the exact volume on the dimpled cube (both
    # programs count the same, larger, volume: 7.0521... instead of 6 for the unit cube)
    m = p.mjm
    dimple = m.body("b_dimple").id
    exact_part = 800 * 6.0e-3 * 0.1 * 0.2 * 0.15  # the mesh file is the cube scaled by 0.1
    expect = exact_part + 3 * 7.0521464989216e-3
    assert abs(m.body_mass[dimple] - expect) < 1e-6 * expect  # vertices are floats


def test_mesh_in_a_body_of_a_loop_matches_mujoco(tmp_path):
    """The four-bar with a mesh coupler (inertia from the mesh), embedded: CE-ABA agrees with
    the dense solve on G^T M_mj G (MuJoCo's mass matrix, mesh inertia included)."""
    write_meshes(str(tmp_path / "meshes"))
    models = os.path.join(os.path.dirname(__file__), "..", "..", "models")
    text = open(os.path.join(models, "cd_four_bar.xml")).read()
    head, sep, tail = text.partition("<body name=\"coupler\"")
    assert sep, "cd_four_bar.xml has no coupler body"
    line_end = tail.index(">") + 1
    text = (head + sep + tail[:line_end] +
            '\n        <geom type="mesh" mesh="box" density="900" contype="0" conaffinity="0"/>'
            + tail[line_end:])
    text = text.replace("<worldbody>", '<asset><mesh name="box" file="meshes/box.stl"/></asset>\n'
                        "  <worldbody>", 1)
    path = tmp_path / "four_bar_mesh.xml"
    path.write_text(text)
    c = cd.Model.load(str(path))
    w = c.workspace()
    mjm = mujoco.MjModel.from_xml_path(str(path))
    mjd = mujoco.MjData(mjm)
    assert abs(c.total_mass - mjm.body_mass.sum()) < TOL * mjm.body_mass.sum()
    rng = np.random.default_rng(3)
    for _ in range(3):
        y = rng.uniform(-0.4, 0.4, c.nyq)
        q, v = w.independent_to_spanning(y, rng.uniform(-1, 1, c.ny))
        G = np.column_stack([w.independent_to_spanning(y, e, q_guess=q)[1]
                             for e in np.eye(c.ny)])
        P = np.zeros((c.nv, mjm.nv))
        qpos = mjm.qpos0.copy()
        for j in range(mjm.njnt):
            name = mjm.joint(j).name
            P[c.velocity_index[name], mjm.jnt_dofadr[j]] = 1.0
            qpos[mjm.jnt_qposadr[j]] += q[c.position_index[name]]
        mjd.qpos[:] = qpos
        mujoco.mj_forward(mjm, mjd)
        M = np.zeros((mjm.nv, mjm.nv))
        mujoco.mj_fullM(mjm, mjd, M)
        Gm = P.T @ G
        H = w.cluster_mass_matrix(q)
        assert np.abs(Gm.T @ M @ Gm - H).max() < TOL * np.abs(H).max()


def test_include_tree_matches_mujoco(tmp_path):
    """main.xml includes parts/leg.xml (relative to the main file), which includes foot.xml
    (found relative to the including file), a default class and the compiler's meshdir come
    from an included file: clusterdyn and MuJoCo read the same model."""
    write_meshes(str(tmp_path / "meshes"))
    (tmp_path / "parts").mkdir()
    (tmp_path / "main.xml").write_text("""<mujoco model="inc">
  <include file="parts/settings.xml"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="ja" class="leg"/>
      <geom type="mesh" mesh="box"/>
      <include file="parts/leg.xml"/>
    </body>
  </worldbody>
</mujoco>
""")
    (tmp_path / "parts" / "settings.xml").write_text("""<mujocoinclude>
  <compiler meshdir="meshes" angle="radian"/>
  <default><default class="leg"><joint axis="0 1 0.3" damping="0.2" armature="0.01"/>
  </default></default>
  <asset><mesh name="box" file="box.stl"/><mesh name="tet" file="tet.obj"/></asset>
</mujocoinclude>
""")
    (tmp_path / "parts" / "leg.xml").write_text("""<mujocoinclude>
  <body name="shin" pos="0.1 0 -0.3" euler="0.2 0 0.1">
    <joint name="knee" class="leg"/>
    <geom type="mesh" mesh="tet" density="3000"/>
    <include file="foot.xml"/>
  </body>
</mujocoinclude>
""")
    (tmp_path / "parts" / "foot.xml").write_text("""<mujocoinclude>
  <body name="foot" pos="0 0.05 -0.3">
    <joint name="ankle" type="ball"/>
    <geom type="box" size="0.05 0.02 0.01"/>
  </body>
</mujocoinclude>
""")
    p = compare(str(tmp_path / "main.xml"))
    assert p.mjm.nv == p.cdm.nv == 5
