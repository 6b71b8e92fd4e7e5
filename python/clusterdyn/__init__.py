"""clusterdyn: rigid-body dynamics of robots with kinematic loops (constraint embedding on a
cluster tree), from Python through the C ABI (libclusterdyn.so.0, ctypes, numpy).

    import clusterdyn as cd
    model = cd.Model.load("models/cd_four_bar.urdf")
    ws = model.workspace()
    q, v = ws.independent_to_spanning(y, ydot)      # closed spanning state
    ydd = ws.ce_aba(q, v, tau)                       # CE-ABA, independent accelerations
    YDD = model.ce_aba_batch(Q, V, TAU, threads=2)   # N states at once
    cs = model.constraint_set(); cs.add_contact("foot")    # contacts, constrained dynamics
    r = cs.workspace().prox_pv(q, v, tau)            # r.ydd, r.lam, r.converged

Units are SI; spatial vectors are angular first. See docs/python.md.
"""

from ._constraints import (CONSTRAINT_ROWS, CONSTRAINT_TYPES, SOLVERS, BatchProximalResult,
                           ConstraintSet, ConstraintWorkspace, Forces, NotConvergedError,
                           NotConvergedWarning, ProximalResult, default_proximal_settings)
from ._core import (CLUSTER_KINDS, ERR_CONSTRAINT_FAILURE, ERR_INTERNAL, ERR_INVALID_ARGUMENT,
                    ERR_INVALID_INDEX, ERR_INVALID_SIZE, ERR_NON_FINITE, ERR_NOT_CONVERGED,
                    ERR_NOT_FOUND, ERR_NOT_POSITIVE_DEFINITE, ERR_NOT_UNIT_QUATERNION,
                    ERR_NULL_POINTER,
                    ERR_OUT_OF_MEMORY, ERR_PARSE, ERR_VERSION, ERR_WORKSPACE_MISMATCH,
                    JOINT_TYPES, LOCAL, LOCAL_WORLD_ALIGNED, OK, WORLD, ClusterdynError, Model,
                    Pool, Workspace, get_log_level, lib, set_log_level, version)
from ._derivatives import DerivativeWorkspace
from ._constrained_derivatives import ConstrainedDerivatives
from ._library import find_library
from ._contact import (CONTACT_SOLVERS, ContactProblem, ContactReport, RolloutResult,
                       StepResult, Stepper, default_contact_settings)

__version__ = "0.2.0"

__all__ = [
    "Model", "Workspace", "Pool", "ClusterdynError", "version", "set_log_level",
    "get_log_level", "find_library", "lib", "LOCAL", "WORLD", "LOCAL_WORLD_ALIGNED",
    "JOINT_TYPES", "CLUSTER_KINDS", "OK", "ERR_INVALID_SIZE", "ERR_NON_FINITE",
    "ERR_NOT_UNIT_QUATERNION", "ERR_NOT_POSITIVE_DEFINITE", "ERR_INVALID_INDEX",
    "ERR_CONSTRAINT_FAILURE", "ERR_WORKSPACE_MISMATCH", "ERR_INVALID_ARGUMENT",
    "ERR_NULL_POINTER", "ERR_VERSION", "ERR_PARSE", "ERR_INTERNAL", "ERR_NOT_FOUND",
    "ERR_OUT_OF_MEMORY", "ERR_NOT_CONVERGED", "ConstraintSet", "ConstraintWorkspace", "Forces",
    "ProximalResult", "BatchProximalResult", "SOLVERS", "NotConvergedWarning",
    "NotConvergedError", "CONSTRAINT_TYPES", "CONSTRAINT_ROWS", "default_proximal_settings",
    "DerivativeWorkspace", "ConstrainedDerivatives",
    # contacts (_contact.py)
    "ContactProblem", "Stepper", "StepResult", "RolloutResult", "ContactReport",
    "CONTACT_SOLVERS", "default_contact_settings",
]
