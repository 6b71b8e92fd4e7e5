"""Finding and loading libclusterdyn.so.0, and declaring the ctypes signatures of its C API
(_signatures.py, generated from clusterdyn.h) on it.

Lookup order (the first that loads wins):

1. the environment variable ``CLUSTERDYN_LIBRARY`` (a path to the shared library; when it is
   set and does not load, that is an error: no silent fallback); it overrides the bundled one;
2. next to the package (``clusterdyn/libclusterdyn.so.0``: where the wheel of
   ``pip install ./python`` bundles it);
3. the build tree, when the package is run from the repository (``<repo>/build*/capi/``);
4. the installed prefix: ``<prefix>/lib*/libclusterdyn.so.0`` relative to an installed package
   (``<prefix>/lib/python3/dist-packages/clusterdyn``), then the dynamic loader's standard
   paths (``ctypes.util.find_library("clusterdyn")`` and ``libclusterdyn.so.0``).
"""

import ctypes as C
import ctypes.util
import os
import pathlib

# The ctypes signatures and structs, GENERATED from clusterdyn.h by capi/generate_ctypes.py.
from ._signatures import SIGNATURES, ContactReport, ContactSettings  # noqa: F401
from ._signatures import ProximalResult, ProximalSettings  # noqa: F401

ABI_VERSION = 0
SONAME = "libclusterdyn.so.0"

# Functions added after the first 0.2 libraries: declared when the library exports them (a
# wrapper calling one that is missing raises a ClusterdynError naming it).
OPTIONAL = ("cdyn_last_error", "cdyn_constraint_kinematics", "cdyn_constraint_set_constraint",
            "cdyn_constraint_wrenches", "cdyn_batch_constrained_dynamics",
            "cdyn_pool_constrained_dynamics")


CONTACT_FUNCTIONS = (
    "cdyn_contact_settings_default", "cdyn_contact_problem_create", "cdyn_contact_problem_free",
    "cdyn_contact_problem_last_error", "cdyn_contact_problem_add_bilateral",
    "cdyn_contact_problem_set_ground", "cdyn_contact_problem_add_foot",
    "cdyn_contact_problem_add_point", "cdyn_contact_problem_add_patch_foot",
    "cdyn_contact_problem_add_patch_point", "cdyn_contact_set_caller_patch",
    "cdyn_contact_problem_sizes",
    "cdyn_contact_workspace_create", "cdyn_contact_workspace_free",
    "cdyn_contact_workspace_last_error", "cdyn_contact_workspace_reset", "cdyn_contact_set_caller",
    "cdyn_contact_frames", "cdyn_contact_solve", "cdyn_contact_step",
    "cdyn_batch_contact_rollout", "cdyn_pool_contact_rollout")
OPTIONAL = OPTIONAL + CONTACT_FUNCTIONS  # a library without them: the contact API raises


def _candidates():
    here = pathlib.Path(__file__).resolve().parent
    yield here / SONAME
    repo = here.parent.parent
    if (repo / "capi" / "clusterdyn.h").is_file():
        for build in sorted(repo.glob("build*")):
            yield build / "capi" / SONAME
    # Installed: <prefix>/<libdir>/python3*/{dist,site}-packages/clusterdyn
    for parent in here.parents:
        if parent.name in ("dist-packages", "site-packages"):
            libdir = parent.parent.parent if parent.parent.name.startswith("python") else None
            if libdir is not None:
                yield libdir / SONAME
                prefix = libdir.parent
                for sub in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
                    yield prefix / sub / SONAME
            break


def find_library():
    """Path (or loader name) of the library that :func:`load` would use, without loading it."""
    env = os.environ.get("CLUSTERDYN_LIBRARY")
    if env:
        return env
    for path in _candidates():
        if path.is_file():
            return str(path)
    return ctypes.util.find_library("clusterdyn") or SONAME


def load():
    """Loads the library (see the module docstring for the search order) and declares every
    function's argument and result types. Raises OSError naming what was tried."""
    env = os.environ.get("CLUSTERDYN_LIBRARY")
    if env:
        try:
            lib = C.CDLL(env)
        except OSError as e:
            raise OSError(f"CLUSTERDYN_LIBRARY={env!r} cannot be loaded: {e}") from e
        return _declare(lib)
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_file():
            return _declare(C.CDLL(str(path)))
    for name in (ctypes.util.find_library("clusterdyn"), SONAME):
        if not name:
            continue
        tried.append(name)
        try:
            return _declare(C.CDLL(name))
        except OSError:
            pass
    raise OSError("libclusterdyn.so.0 not found; set CLUSTERDYN_LIBRARY to its path. Tried: "
                  + ", ".join(tried))


def _declare(lib):
    """Sets argtypes and restype of every function of the C API (SIGNATURES) on lib; a function
    of OPTIONAL that lib does not export is left out."""
    for name, (restype, argtypes) in SIGNATURES.items():
        if name in OPTIONAL and not hasattr(lib, name):
            continue
        fn = getattr(lib, name)
        fn.argtypes = list(argtypes)
        fn.restype = restype
    return lib
