"""Derivatives of the constrained dynamics of a ConstraintSet (clusterdyn.h "Constrained-dynamics
derivatives", docs/derivatives.md K1-K9): the numpy wrapper of
cdyn_constrained_dynamics_derivatives, the counterpart of Pinocchio's
computeConstraintDynamicsDerivatives (Carpentier & Mansard 2018) in independent coordinates.
"""

import collections
import ctypes as C

import numpy as np

from ._core import OK, ClusterdynError, _check, _fext, _ptr, _vec, lib


class ConstrainedDerivatives(collections.namedtuple(
        "ConstrainedDerivatives",
        "ydd lam dydd_dy dydd_dydot dydd_dtau dlam_dy dlam_dydot dlam_dtau rank")):
    """Result of :meth:`ConstraintSet.constrained_dynamics_derivatives`: ydd (ny,) and lam (m,)
    of the exact (dense Schur-complement) constrained dynamics, dydd_dy, dydd_dydot, dydd_dtau
    (ny, ny), dlam_dy, dlam_dydot, dlam_dtau (m, ny), rank (int, of the Delassus matrix; < m for
    redundant rows, then lam and the dlam_* are the minimum-norm ones).
    """
    __slots__ = ()



def _rank_tolerance(value):
    """The C argument for rank_tolerance: 0 selects the library's default (1e-10)."""
    if value is None:
        return 0.0
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"rank_tolerance must be a real number, got {value!r}")
    return float(value)


def _derivative_workspace(cset):
    """The set's constrained derivative workspace, created on first use (freed by cset.close())."""
    if cset._cdws is None:
        h = C.c_void_p()
        _check(lib().cdyn_constrained_derivative_workspace_create(cset.handle, C.byref(h)),
               "cdyn_constrained_derivative_workspace_create",
               lib().cdyn_last_error().decode(errors="replace"))
        cset._cdws = h
    return cset._cdws

def constrained_dynamics_derivatives(cset, q, v, tau, fext=None, rank_tolerance=None):
    """The constrained dynamics of the ConstraintSet cset and its derivatives.

    q (nq,), v (nv,): a closed spanning state; tau (ny,) independent efforts; fext None or
    (nbodies, 6) forces TO the bodies in body coordinates, held fixed in the body frames. ydd and
    lam solve H ydd + C = tau + J^T lam, J ydd + gamma = k exactly (dense Schur complement, no
    proximal iterations; lam the force on the robot as in ConstraintWorkspace.prox_pv). Column k
    of d/dy is the derivative along the independent tangent e_k (floating base: body-frame
    twist; the loops' dependent joints follow), ydot and tau held. rank_tolerance: None for the
    default 1e-10, else in (0, 1) (eigenvalues of the Delassus matrix at or below it times the
    largest are dropped). Returns a :class:`ConstrainedDerivatives`. The first call creates the
    set's derivative workspace (the set is read-only from then on; freed by cset.close()); later
    calls allocate nothing in the library. One thread at a time per set.
    """
    model = cset.model
    q, v = _vec(q, model.nq, "q"), _vec(v, model.nv, "v")
    tau = _vec(tau, model.ny, "tau")
    f = _fext(fext, model.nbodies)
    rt = _rank_tolerance(rank_tolerance)
    _derivative_workspace(cset)
    ny, m = model.ny, cset.nrows
    ydd, lam = np.zeros(ny), np.zeros(m)
    mats = [np.zeros((ny, ny), order="F") for _ in range(3)]
    lmats = [np.zeros((m, ny), order="F") for _ in range(3)]
    rank = C.c_int(-1)
    status = lib().cdyn_constrained_dynamics_derivatives(
        cset.handle, cset._cdws, _ptr(q), q.size, _ptr(v), v.size, _ptr(tau), tau.size, _ptr(f),
        0 if f is None else f.size, rt, _ptr(ydd), ny, _ptr(lam), m, *(_ptr(a) for a in mats),
        max(1, ny), *(_ptr(a) for a in lmats), max(1, m), C.byref(rank))
    if status != OK:
        message = lib().cdyn_constrained_derivative_workspace_last_error(cset._cdws)
        raise ClusterdynError(status, message.decode(errors="replace"),
                              "cdyn_constrained_dynamics_derivatives")
    c = np.ascontiguousarray
    return ConstrainedDerivatives(ydd, lam, *(c(a) for a in mats), *(c(a) for a in lmats),
                                  rank.value)
