"""Smoke check of the clusterdyn wheel installed into a fresh virtual environment (ctest
python_wheel, python/tests/wheel_test.cmake; not a pytest module).

Usage: VENV/bin/python wheel_smoke.py --venv VENV --model MODEL.urdf --library BUILD_LIB [--cli CLI]
Run WITHOUT CLUSTERDYN_LIBRARY. Checks that the package and its bundled library come from the
venv's site-packages, that the wheel's metadata declares numpy, that CE-ABA on MODEL closes the
loop with CE-RNEA (tau back) and with H ydd + C = tau, that CLUSTERDYN_LIBRARY overrides the
bundled library (BUILD_LIB, the build tree's: same accelerations) and that a CLUSTERDYN_LIBRARY
that does not load is an error, not a fallback; with --cli, that the model's sizes and mass agree
with the C++ tool (clusterdyn info --json). Exit 0 on success; an AssertionError otherwise.
"""
import argparse
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
import sysconfig

import numpy as np

import clusterdyn as cd


def ce_aba(model_path):
    """CE-ABA at a closed state of the model, with its oracles; returns (ydd, tau, sizes)."""
    m = cd.Model.load(model_path)
    ws = m.workspace()
    q, v = ws.independent_to_spanning(y=np.full(m.nyq, 0.3), ydot=np.linspace(0.5, 1.0, m.ny))
    tau = np.linspace(0.1, -0.2, m.ny)
    ydd = ws.ce_aba(q, v, tau)
    assert np.all(np.isfinite(ydd)) and np.linalg.norm(ydd) > 1e-6, ydd
    np.testing.assert_allclose(ws.ce_rnea(q, v, ydd), tau, rtol=0, atol=1e-9)  # CE-RNEA o CE-ABA
    H, C = ws.cluster_mass_matrix(q), ws.cluster_bias(q, v)
    np.testing.assert_allclose(H @ ydd + C, tau, rtol=0, atol=1e-9)  # H ydd + C = tau
    return ydd, {"nq": m.nq, "nv": m.nv, "nbodies": m.nbodies, "total_mass": m.total_mass}


def child(*args, library):
    """This script in a child process with CLUSTERDYN_LIBRARY=library; returns its JSON output."""
    env = dict(os.environ, CLUSTERDYN_LIBRARY=library)
    out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                         text=True)
    return out.returncode, out.stdout, out.stderr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--venv", type=pathlib.Path)
    p.add_argument("--model", required=True)
    p.add_argument("--library")
    p.add_argument("--cli")
    p.add_argument("--child", action="store_true", help="print CE-ABA's result as JSON")
    a = p.parse_args()
    if a.child:  # CLUSTERDYN_LIBRARY is set by the parent
        ydd, _ = ce_aba(a.model)
        print(json.dumps({"library": cd.find_library(), "ydd": ydd.tolist()}))
        return
    assert "CLUSTERDYN_LIBRARY" not in os.environ, "run without CLUSTERDYN_LIBRARY"

    # The package, its library and numpy come from the fresh venv.
    venv = a.venv.resolve()
    assert pathlib.Path(sys.prefix).resolve() == venv, (sys.prefix, venv)
    site = {pathlib.Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib")}
    package = pathlib.Path(cd.__file__).resolve().parent
    assert package.parent in site, f"clusterdyn imported from {package}, not from {site}"
    found = pathlib.Path(cd.find_library())
    assert found == package / "libclusterdyn.so.0", f"find_library() = {found}"
    assert pathlib.Path(np.__file__).resolve().parent.parent in site, np.__file__
    requires = importlib.metadata.requires("clusterdyn") or []
    assert any(r.split(";")[0].strip().startswith("numpy") for r in requires), requires
    dist_version = importlib.metadata.version("clusterdyn")
    assert dist_version == cd.__version__ == cd.version(), (dist_version, cd.__version__,
                                                             cd.version())

    ydd, sizes = ce_aba(a.model)
    assert cd.lib()._name == str(found), cd.lib()._name  # the bundled library was loaded

    if a.cli:  # the C++ tool of the build tree reads the same model
        info = json.loads(subprocess.run([a.cli, "info", a.model, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
        for key in ("nq", "nv", "nbodies"):
            assert info[key] == sizes[key], (key, info[key], sizes[key])
        assert abs(info["total_mass"] - sizes["total_mass"]) < 1e-12, info["total_mass"]

    # CLUSTERDYN_LIBRARY overrides the bundled library: the build tree's gives the same result.
    if a.library:
        rc, out, err = child("--model", a.model, "--child", library=a.library)
        assert rc == 0, f"with CLUSTERDYN_LIBRARY={a.library}: exit {rc}\n{err}"
        other = json.loads(out)
        assert other["library"] == a.library, other["library"]
        np.testing.assert_allclose(other["ydd"], ydd, rtol=1e-12, atol=1e-12)
    # ... and one that does not load is an error naming it (no silent fallback to the bundled).
    missing = str(pathlib.Path.cwd() / "no-such-libclusterdyn.so")
    rc, out, err = child("--model", a.model, "--child", library=missing)
    assert rc != 0 and "CLUSTERDYN_LIBRARY" in err and missing in err, (rc, out, err)

    print(f"wheel OK: clusterdyn {dist_version} from {package}, library {found}, "
          f"ydd = {ydd}" + (f", same with CLUSTERDYN_LIBRARY={a.library}" if a.library else ""))


if __name__ == "__main__":
    main()
