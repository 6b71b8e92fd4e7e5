"""Finding and loading libclusterdyn.so.0, and the ctypes signatures of its C API.

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

ABI_VERSION = 0
SONAME = "libclusterdyn.so.0"

_D = C.POINTER(C.c_double)
_I = C.POINTER(C.c_int)
_H = C.c_void_p
_int = C.c_int
_S = C.POINTER(C.c_char_p)
_size = C.c_size_t


class ProximalSettings(C.Structure):
    """cdyn_proximal_settings (settings of the proximal constrained-dynamics solves)."""
    _fields_ = [("mu", C.c_double), ("tolerance", C.c_double), ("max_iterations", C.c_int),
                ("warm_start", C.c_int)]


class ProximalResult(C.Structure):
    """cdyn_proximal_result (outcome of a proximal solve)."""
    _fields_ = [("status", C.c_int), ("iterations", C.c_int), ("residual", C.c_double),
                ("dual_step", C.c_double), ("converged", C.c_int)]


# Functions added after the first 0.2 libraries: declared when the library exports them (a
# wrapper calling one that is missing raises a ClusterdynError naming it).
OPTIONAL = ("cdyn_last_error", "cdyn_constraint_kinematics", "cdyn_constraint_set_constraint",
            "cdyn_constraint_wrenches", "cdyn_batch_constrained_dynamics",
            "cdyn_pool_constrained_dynamics")


# ---- Contacts (cdyn_contact_*, cdyn_*_contact_rollout) ---------------------------------------


class ContactSettings(C.Structure):
    """cdyn_contact_settings (settings of a contact solve / step)."""
    _fields_ = [("dt", C.c_double), ("beta", C.c_double), ("max_push_velocity", C.c_double),
                ("activation_distance", C.c_double), ("tolerance", C.c_double),
                ("rho", C.c_double), ("solver", C.c_int), ("max_iterations", C.c_int),
                ("warm_start", C.c_int), ("polish_after", C.c_int),
                ("active_set_steps", C.c_int)]


class ContactReport(C.Structure):
    """cdyn_contact_report (outcome of a contact solve / step)."""
    _fields_ = [("status", C.c_int), ("iterations", C.c_int), ("converged", C.c_int),
                ("active_contacts", C.c_int), ("primal_residual", C.c_double),
                ("dual_residual", C.c_double), ("complementarity", C.c_double),
                ("rho", C.c_double)]


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


def _declare_contacts(f):
    """The contact functions' signatures (f: _declare's declaring function)."""
    CS, CR, W = C.POINTER(ContactSettings), C.POINTER(ContactReport), C.POINTER(_H)
    f("cdyn_contact_settings_default", CS)
    f("cdyn_contact_problem_create", _H, C.POINTER(_H))
    f("cdyn_contact_problem_free", _H)
    f("cdyn_contact_problem_last_error", _H, restype=C.c_char_p)
    f("cdyn_contact_problem_add_bilateral", _H, _H)
    f("cdyn_contact_problem_set_ground", _H, _D, _int, C.c_double)
    f("cdyn_contact_problem_add_foot", _H, C.c_char_p, _int, _D, _int, C.c_double, C.c_double,
      _I)
    f("cdyn_contact_problem_add_point", _H, C.c_char_p, _int, _D, _int, _I)
    f("cdyn_contact_problem_add_patch_foot", _H, C.c_char_p, _int, _D, _int,
      *([C.c_double] * 4), _I)
    f("cdyn_contact_problem_add_patch_point", _H, C.c_char_p, _int, _D, _int, _int, _I)
    f("cdyn_contact_set_caller_patch", _H, _H, *([_D, _int] * 2))
    f("cdyn_contact_problem_sizes", _H, _I, _I, _I)
    f("cdyn_contact_workspace_create", _H, C.POINTER(_H))
    f("cdyn_contact_workspace_free", _H)
    f("cdyn_contact_workspace_last_error", _H, restype=C.c_char_p)
    f("cdyn_contact_workspace_reset", _H, _H)
    f("cdyn_contact_set_caller", _H, _H, *([_D, _int] * 3))
    f("cdyn_contact_frames", _H, _H, *([_D, _int] * 3))
    f("cdyn_contact_solve", _H, _H, *([_D, _int] * 3), CS, _D, _int, CR)
    f("cdyn_contact_step", _H, _H, *([_D, _int] * 3), CS, *([_D, _int] * 3), CR)
    rollout = (_int, _int, CS, *([_D, _int] * 6), CR, _I)
    f("cdyn_batch_contact_rollout", _H, W, _int, *rollout)
    f("cdyn_pool_contact_rollout", _H, _H, W, _int, *rollout)

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
    def f(name, *args, restype=C.c_int):
        if name in OPTIONAL and not hasattr(lib, name):
            return
        fn = getattr(lib, name)
        fn.argtypes = list(args)
        fn.restype = restype

    f("cdyn_version")
    f("cdyn_version_string", restype=C.c_char_p)
    f("cdyn_check_version", _int)
    f("cdyn_status_string", _int, restype=C.c_char_p)
    f("cdyn_last_error", restype=C.c_char_p)
    f("cdyn_model_load", _int, C.c_char_p, C.c_uint, _D, C.POINTER(_H), C.c_char_p, _size)
    f("cdyn_model_load_string", _int, C.c_char_p, _size, C.c_uint, _D, C.POINTER(_H),
      C.c_char_p, _size)
    f("cdyn_model_load_string_dir", _int, C.c_char_p, _size, C.c_char_p, C.c_uint, _D,
      C.POINTER(_H), C.c_char_p, _size)
    f("cdyn_model_free", _H)
    f("cdyn_model_name", _H, _S)
    for name in ("nbodies", "nq", "nv", "nframes", "nclusters", "ny", "nyq", "nloops",
                 "nrelations", "nwarnings"):
        f("cdyn_model_" + name, _H, _I)
    f("cdyn_model_total_mass", _H, _D)
    f("cdyn_model_gravity", _H, _D)
    for name in ("body_name", "joint_name", "position_name", "velocity_name", "frame_name",
                 "independent_position_name", "independent_velocity_name", "cluster_name"):
        f("cdyn_model_" + name, _H, _int, _S)
    for name in ("body_index", "joint_index", "position_index", "velocity_index", "frame_index",
                 "independent_position_index", "independent_velocity_index", "cluster_index"):
        f("cdyn_model_" + name, _H, C.c_char_p, _I)
    for name in ("body_parent", "joint_type", "frame_body", "body_cluster"):
        f("cdyn_model_" + name, _H, _int, _I)
    f("cdyn_model_joint_coordinates", _H, _int, _I, _I, _I, _I)
    f("cdyn_model_position_limits", _H, _D, _D, _int)
    f("cdyn_model_velocity_limits", _H, _D, _int)
    f("cdyn_model_effort_limits", _H, _D, _int)
    for name in ("describe", "describe_clusters", "cluster_tree_dot", "warnings"):
        f("cdyn_model_" + name, _H, C.c_char_p, _size, C.POINTER(_size))
    f("cdyn_model_independent_indices", _H, _I, _int, _I, _int)
    f("cdyn_model_reference_configuration", _H, _D, _int)
    f("cdyn_model_cluster_info", _H, _int, _I, _I, _I, _I, _I)
    f("cdyn_model_cluster_coordinates", _H, _int, _I, _I, _I, _I, _I, _I, _I, _I)
    f("cdyn_workspace_create", _H, C.POINTER(_H))
    f("cdyn_workspace_size", _H, C.POINTER(_size))
    f("cdyn_workspace_init_in", _H, C.c_void_p, _size, C.POINTER(_H))
    f("cdyn_workspace_free", _H)
    f("cdyn_workspace_last_error", _H, restype=C.c_char_p)
    f("cdyn_set_log_level", _int)
    f("cdyn_get_log_level", _I)
    f("cdyn_neutral_configuration", _H, _H, _D, _int)
    f("cdyn_integrate", _H, _H, _D, _int, _D, _int, C.c_double, _D, _int)
    f("cdyn_normalize_configuration", _H, _H, _D, _int)
    f("cdyn_forward_kinematics", _H, _H, _D, _int, _D, _int, _D, _int)
    f("cdyn_frame_placement", _H, _H, _int, _D, _int, _D)
    f("cdyn_frame_placement_matrix", _H, _H, _int, _D, _int)
    for name in ("frame_velocity", "frame_acceleration", "frame_classical_acceleration"):
        f("cdyn_" + name, _H, _H, _int, _int, _D)
    f("cdyn_frame_jacobian", _H, _H, _int, _int, _D, _int)
    f("cdyn_compute_frame_jacobian", _H, _H, _D, _int, _int, _int, _D, _int)
    f("cdyn_center_of_mass", _H, _H, _D, _int, _D)
    f("cdyn_rnea", _H, _H, *([_D, _int] * 5))
    f("cdyn_aba", _H, _H, *([_D, _int] * 5))
    f("cdyn_crba", _H, _H, _D, _int, _D, _int)
    f("cdyn_nonlinear_effects", _H, _H, _D, _int, _D, _int, _D, _int)
    f("cdyn_generalized_gravity", _H, _H, _D, _int, _D, _int)
    f("cdyn_kinetic_energy", _H, _H, _D, _int, _D, _int, _D)
    f("cdyn_potential_energy", _H, _H, _D, _int, _D)
    f("cdyn_ce_aba", _H, _H, *([_D, _int] * 6))
    f("cdyn_ce_aba_spanning_forces", _H, _H, *([_D, _int] * 6))
    f("cdyn_ce_aba_independent", _H, _H, *([_D, _int] * 8))
    f("cdyn_ce_rnea", _H, _H, *([_D, _int] * 6))
    f("cdyn_cluster_mass_matrix", _H, _H, _D, _int, _D, _int)
    f("cdyn_cluster_bias", _H, _H, _D, _int, _D, _int, _D, _int)
    f("cdyn_solve_loop_closure", _H, _H, *([_D, _int] * 3))
    f("cdyn_independent_to_spanning", _H, _H, *([_D, _int] * 5))
    f("cdyn_spanning_to_independent", _H, _H, *([_D, _int] * 4))
    f("cdyn_project_to_constraints", _H, _H, *([_D, _int] * 4))
    f("cdyn_last_loop_closure", _H, _H, _I, _D)
    f("cdyn_constraint_matrices", _H, _H, *([_D, _int] * 4))
    f("cdyn_cluster_constraint_matrices", _H, _H, _int, *([_D, _int] * 4))
    # Batched evaluation (cdyn_batch_*: caller workspaces; cdyn_pool_*: a pool).
    f("cdyn_pool_create", _H, _int, C.POINTER(_H))
    f("cdyn_pool_free", _H)
    f("cdyn_pool_nthreads", _H, _I)
    f("cdyn_pool_last_error", _H, restype=C.c_char_p)
    W = C.POINTER(_H)
    f("cdyn_batch_ce_aba", _H, W, _int, _int, _int, *([_D, _int] * 6), _I)
    f("cdyn_batch_ce_aba_independent", _H, W, _int, _int, _int, *([_D, _int] * 9), _I)
    f("cdyn_batch_ce_rnea", _H, W, _int, _int, _int, *([_D, _int] * 6), _I)
    f("cdyn_batch_cluster_mass_matrix", _H, W, _int, _int, _int, *([_D, _int] * 2), _I)
    f("cdyn_pool_ce_aba", _H, _H, _int, _int, *([_D, _int] * 6), _I)
    f("cdyn_pool_ce_aba_independent", _H, _H, _int, _int, *([_D, _int] * 9), _I)
    f("cdyn_pool_ce_rnea", _H, _H, _int, _int, *([_D, _int] * 6), _I)
    f("cdyn_pool_cluster_mass_matrix", _H, _H, _int, _int, *([_D, _int] * 2), _I)
    # Constraint forces (cdyn_forces_*).
    f("cdyn_forces_create", _H, C.POINTER(_H))
    f("cdyn_forces_free", _H)
    f("cdyn_forces_after_ce_aba", _H, _H, _H, _D, _int, _int)
    f("cdyn_forces_after_ce_rnea", _H, _H, _H)
    f("cdyn_forces_joint_wrenches", _H, _H, _H, _int, _D, _int)
    f("cdyn_forces_loop_wrenches", _H, _H, _D, _int)
    f("cdyn_forces_loop_rows", _H, _H, _int, _D, _int)
    f("cdyn_forces_loop_info", _H, _int, _S, _I, _I, _I, _D)
    f("cdyn_forces_coupling_info", _H, _int, _S, _I)
    f("cdyn_forces_coupling_term", _H, _int, _int, _I, _D)
    f("cdyn_forces_coupling", _H, _H, _int, _D, _D, _int)
    # Constraints (contacts, welds, loops) and constrained dynamics.
    PS, PR = C.POINTER(ProximalSettings), C.POINTER(ProximalResult)
    f("cdyn_proximal_settings_default", PS)
    f("cdyn_constraint_set_create", _H, C.POINTER(_H))
    f("cdyn_constraint_set_create_cut_loops", _H, C.POINTER(_H))
    f("cdyn_constraint_set_free", _H)
    f("cdyn_constraint_set_last_error", _H, restype=C.c_char_p)
    f("cdyn_constraint_set_add", _H, C.c_char_p, _int, _int, _D, _int, _D, _int, _D, _I)
    f("cdyn_constraint_set_add_contact", _H, C.c_char_p, _int, _int, C.c_char_p, _I)
    f("cdyn_constraint_set_size", _H, _I)
    f("cdyn_constraint_set_nrows", _H, _I)
    f("cdyn_constraint_set_row_name", _H, _int, _S)
    f("cdyn_constraint_set_constraint", _H, _int, _S, _I, _I, _D, _I, _D, _I, _D, _I, _I)
    f("cdyn_constraint_workspace_create", _H, _H, C.POINTER(_H))
    f("cdyn_constraint_workspace_free", _H)
    f("cdyn_constraint_workspace_last_error", _H, restype=C.c_char_p)
    f("cdyn_constraint_jacobian", _H, _H, _D, _D, _int, _D, _int, _D)
    f("cdyn_constraint_kinematics", _H, _H, _D, _D, _int, _D, _int, _D, _D)
    f("cdyn_delassus_matrix", _H, _H, _D, _D, _int)
    f("cdyn_damped_delassus_inverse", _H, _H, _D, C.c_double, _D, _int)
    for name in ("constrained_aba", "prox_pv", "constrained_dynamics_dense"):
        f("cdyn_" + name, _H, _H, _D, _D, _D, _D, PS, _D, _D, _D, _int, PR)
    f("cdyn_constraint_wrenches", _H, _H, _D, _int)
    # Batched constrained dynamics (caller constraint workspaces; on threads or a pool).
    solve = (_int, _int, _int, _D, _D, _D, _D, PS, _D, _D, _D, _int, PR, _I)
    f("cdyn_batch_constrained_dynamics", _H, W, _int, *solve)
    f("cdyn_pool_constrained_dynamics", _H, _H, W, _int, *solve)
    # Derivatives of the dynamics (derivative workspaces; clusterdyn.h "Derivatives").
    f("cdyn_derivative_workspace_create", _H, C.POINTER(_H))
    f("cdyn_derivative_workspace_free", _H)
    f("cdyn_derivative_workspace_last_error", _H, restype=C.c_char_p)
    single = (_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _D, _D, _int)
    for name in ("rnea", "aba", "ce_rnea", "ce_aba"):
        f(f"cdyn_{name}_derivatives", *single)
    f("cdyn_minverse", _H, _H, _D, _int, _D, _int)
    f("cdyn_cluster_minverse", _H, _H, _D, _int, _D, _int)
    f("cdyn_difference", _H, _H, _D, _int, _D, _int, _D, _int)
    batch = (_H, C.POINTER(_H), _int, _int, _int) + (_D, _int) * 8 + (_I,)
    for name in ("rnea", "aba", "ce_rnea", "ce_aba"):
        f(f"cdyn_batch_{name}_derivatives", *batch)
    for name in ("minverse", "cluster_minverse"):
        f(f"cdyn_batch_{name}", _H, C.POINTER(_H), _int, _int, _int, _D, _int, _D, _int, _I)
    _declare_contacts(f)
    _declare_constrained_derivatives(f)
    return lib


# ---- Constrained-dynamics derivatives (clusterdyn.h "Constrained-dynamics derivatives") -----


def _declare_constrained_derivatives(f):
    """The constrained-dynamics derivative functions' signatures (f: _declare's declaring
    function)."""
    f("cdyn_constrained_derivative_workspace_create", _H, C.POINTER(_H))
    f("cdyn_constrained_derivative_workspace_free", _H)
    f("cdyn_constrained_derivative_workspace_last_error", _H, restype=C.c_char_p)
    f("cdyn_constrained_dynamics_derivatives", _H, _H, _D, _int, _D, _int, _D, _int, _D, _int,
      C.c_double, _D, _int, _D, _int, _D, _D, _D, _int, _D, _D, _D, _int, _I)
