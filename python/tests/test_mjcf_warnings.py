"""MJCF load warnings through the C API (Model.warnings) and text that opens no files
(docs/mjcf.md §2.1, §2.3)."""
import os

import pytest

import clusterdyn as cd

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "models")

XML = """<mujoco model="w">
<visual><global offwidth="64"/></visual>
<worldbody>
<camera name="c0"/>
<body name="a">
<joint name="ja" frictionloss="0.2"/>
<geom size="0.1"/>
<camera name="c1"/>
</body>
</worldbody>
<actuator><motor joint="ja"/></actuator>
</mujoco>
"""


def test_ignored_elements_are_named_warnings(tmp_path):
    path = tmp_path / "w.xml"
    path.write_text(XML)
    for m, src in ((cd.Model.load(path), str(path)), (cd.Model.from_string(XML), "<string>")):
        w = m.warnings
        assert isinstance(w, tuple) and len(w) == 4, w
        assert w[0] == f"{src}:2: <visual>: ignored (no effect on the dynamics)"
        assert w[1] == f"{src}:4: <camera>: ignored (no effect on the dynamics) (2 occurrences)"
        assert w[2].startswith(f"{src}:6: <joint") and "frictionloss" in w[2]
        assert w[3].startswith(f"{src}:11: <actuator>: ignored")
        assert m.nv == 1  # the model itself is the hinge


def test_urdf_and_clean_mjcf_have_none():
    assert cd.Model.load(os.path.join(MODELS, "cd_four_bar.urdf")).warnings == ()
    clean = '<mujoco><worldbody><body><joint/><geom size="0.1"/></body></worldbody></mujoco>'
    assert cd.Model.from_string(clean).warnings == ()


def test_text_opens_no_files(tmp_path, monkeypatch):
    (tmp_path / "leg.xml").write_text(
        '<mujocoinclude><body name="leg"><joint/><geom size="0.1"/></body></mujocoinclude>')
    monkeypatch.chdir(tmp_path)  # the file is in the working directory: still refused
    xml = '<mujoco>\n<worldbody>\n<include file="leg.xml"/>\n</worldbody>\n</mujoco>\n'
    with pytest.raises(cd.ClusterdynError, match=r"<string>:3: <include>.*opens no files"):
        cd.Model.from_string(xml)
    (tmp_path / "main.xml").write_text(xml)
    assert cd.Model.load(tmp_path / "main.xml").nv == 1  # from its file: read


def test_text_reads_includes_and_meshes_relative_to_base_dir(tmp_path):
    """from_string(..., base_dir=DIR): relative <include file> / <mesh file> names resolve
    against DIR (not the working directory), as against a loaded file's own directory."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "leg.xml").write_text(
        '<mujocoinclude><body name="leg"><joint name="j"/><geom size="0.1"/>'
        '<body name="shin" pos="0 0 -0.3"><joint name="k"/><geom size="0.05"/></body>'
        '</body></mujocoinclude>')
    xml = '<mujoco>\n<worldbody>\n<include file="parts/leg.xml"/>\n</worldbody>\n</mujoco>\n'
    (tmp_path / "main.xml").write_text(xml)
    with cd.Model.from_string(xml, base_dir=tmp_path) as a, \
            cd.Model.from_string(xml.encode(), base_dir=str(tmp_path)) as b, \
            cd.Model.load(tmp_path / "main.xml") as ref:
        for m in (a, b):
            assert (m.nq, m.nv) == (ref.nq, ref.nv) == (2, 2)
            assert m.total_mass == ref.total_mass > 0
    with pytest.raises(cd.ClusterdynError, match=r"<string>:3: <include>"):
        cd.Model.from_string(xml, base_dir=tmp_path / "parts")  # parts/parts/leg.xml: missing
    with pytest.raises(cd.ClusterdynError, match=r"opens no files"):
        cd.Model.from_string(xml, base_dir=None)
