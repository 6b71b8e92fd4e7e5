"""Batched forms, for clusterdyn.distributed, of two calls that have none with the signature of the
other *_batch calls: contact rollouts on the model's pool (ContactProblem.rollout) and the
constrained-dynamics derivatives of N states (a loop over the set's one constrained derivative
workspace, writing each state's result in place: the library has no batch of them).
"""

import ctypes as C
import functools

import numpy as np

from ._constrained_derivatives import (ConstrainedDerivatives, _derivative_workspace,
                                      _rank_tolerance)
from ._core import (_COL_MAJOR, _ROW_MAJOR, OK, ClusterdynError, _check, _check_out, _stack,
                    _stack_fext, _threads, lib)

_D = C.POINTER(C.c_double)
_FN = "cdyn_constrained_dynamics_derivatives"


def rollout_batch(problem, Q0, V0, TAU, caller=None, threads=None, use_pool=True, **settings):
    """ContactProblem.rollout of N rollouts on the model's pool of `threads` threads (default
    os.cpu_count()) when use_pool, else on `threads` threads started for the call: the same
    RolloutResult, bit-identical (each rollout equals T single steps whatever the split)."""
    n = _threads(threads)
    if use_pool:
        return problem.rollout(Q0, V0, TAU, pool=problem.model.pool(n), caller=caller,
                               **settings)
    return problem.rollout(Q0, V0, TAU, threads=n, caller=caller, **settings)


def _outputs(out, N, ny, m):
    """The nine result arrays (the fields of ConstrainedDerivatives with a leading N axis): new
    ones, or the caller's `out`, checked. The matrices are written column-major per state (the
    library's single call, leading dimension ny or m): (N, a, b) views whose transpose(0, 2, 1)
    is C-contiguous, so that nothing is copied or transposed afterwards."""
    shapes = [(N, ny), (N, m)] + [(N, ny, ny)] * 3 + [(N, m, ny)] * 3
    if out is None:
        mats = [np.zeros((N, s[2], s[1])).transpose(0, 2, 1) for s in shapes[2:]]
        return [np.zeros(shapes[0]), np.zeros(shapes[1])] + mats + [np.zeros(N, np.intc)]
    given = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(given) != 9:
        raise ValueError(f"out must hold 9 arrays (the fields of ConstrainedDerivatives), got "
                         f"{len(given)}")
    for k in (0, 1):
        _check_out(given[k], shapes[k], _ROW_MAJOR, f"out[{k}]")
    for k in range(2, 8):
        M = given[k]
        if not isinstance(M, np.ndarray) or M.dtype != np.float64 or M.shape != shapes[k] or \
                not M.flags.writeable or not M.transpose(0, 2, 1).flags.c_contiguous:
            got = f"{M.dtype} {M.shape}" if isinstance(M, np.ndarray) else type(M).__name__
            raise ValueError(f"out[{k}] must be a writeable float64 array of shape {shapes[k]} "
                             f"whose transpose(0, 2, 1) is C-contiguous (each state's matrix "
                             f"column-major), got {got}")
    r = given[8]
    if not isinstance(r, np.ndarray) or r.dtype != np.intc or r.shape != (N,) or \
            not r.flags.c_contiguous or not r.flags.writeable:
        raise ValueError(f"out[8] must be a writeable C int array of shape ({N},)")
    return list(given)


def constrained_dynamics_derivatives_batch(cset, Q, V, TAU, fext=None, rank_tolerance=None,
                                           out=None):
    """N states of ConstraintSet.constrained_dynamics_derivatives: Q (N, nq), V (N, nv) closed
    spanning states, TAU (N, ny), fext None or (N, nbodies, 6). Returns a ConstrainedDerivatives
    whose fields have a leading N axis (ydd (N, ny), lam (N, m), dydd_* (N, ny, ny), dlam_*
    (N, m, ny), rank (N,) C int), each state bit-identical to the single call. A loop on the
    calling thread over the set's one constrained derivative workspace (no batch in the
    library): run it on several processes (clusterdyn.distributed) for parallelism. Each
    state's matrices are written in place, column-major (M[i] Fortran-ordered); out: None, or
    nine arrays of that layout to write into (e.g. the arrays of an earlier call). A failing
    state raises ClusterdynError with its index in ``state`` and in the message."""
    model = cset.model
    N, (Q, V, TAU), layout = _stack([(Q, model.nq, "Q"), (V, model.nv, "V"),
                                      (TAU, model.ny, "TAU")])
    if layout == _COL_MAJOR:  # the loop reads each state's row contiguously
        Q, V, TAU = (np.ascontiguousarray(a) for a in (Q, V, TAU))
    F = _stack_fext(fext, N, model.nbodies, _ROW_MAJOR)
    rt = _rank_tolerance(rank_tolerance)
    ny, m = model.ny, cset.nrows
    res = _outputs(out, N, ny, m)
    _derivative_workspace(cset)
    # Row i of an array starts at its address + i * (bytes per state).
    rows = [(a.ctypes.data, a.strides[0]) for a in (Q, V, TAU) + ((F,) if F is not None else ())]
    outs = [(a.ctypes.data, a.strides[0]) for a in res[:8]]
    rank = res[8]
    ranks = rank.ctypes.data
    f_len = 0 if F is None else F.shape[1]
    fn = lib().cdyn_constrained_dynamics_derivatives
    h, cdws = cset.handle, cset._cdws
    sizes = (model.nq, model.nv, ny)
    lds = (max(1, ny), max(1, m))
    for i in range(N):
        q, v, t = (C.cast(base + i * step, _D) for base, step in rows[:3])
        f = C.cast(rows[3][0] + i * rows[3][1], _D) if F is not None else None
        o = [C.cast(base + i * step, _D) for base, step in outs]
        status = fn(h, cdws, q, sizes[0], v, sizes[1], t, sizes[2], f, f_len, rt, o[0], ny,
                    o[1], m, o[2], o[3], o[4], lds[0], o[5], o[6], o[7], lds[1],
                    C.cast(ranks + i * rank.strides[0], C.POINTER(C.c_int)))
        if status != OK:
            message = lib().cdyn_constrained_derivative_workspace_last_error(cdws)
            raise ClusterdynError(status, f"{message.decode(errors='replace')} (state {i})", _FN,
                                  state=i)
    return ConstrainedDerivatives(*res)


LOOPS = {"rollout_batch": rollout_batch,
         "constrained_dynamics_derivatives_batch": constrained_dynamics_derivatives_batch}
"""Batched calls that are functions of their target (a ContactProblem, a ConstraintSet)."""


def method(target, name):
    """The batched call `name` of `target`: its method, or a function of LOOPS bound to it."""
    loop = LOOPS.get(name)
    return getattr(target, name) if loop is None else functools.partial(loop, target)


COLUMN_MAJOR = dict.fromkeys(("rnea_derivatives_batch", "aba_derivatives_batch",
                              "ce_rnea_derivatives_batch", "ce_aba_derivatives_batch"), (1, 2, 3))
COLUMN_MAJOR["constrained_dynamics_derivatives_batch"] = (2, 3, 4, 5, 6, 7)
"""Per batched call, the results (by index among its arrays) that are per-state column-major
matrices: (N, a, b) views of C-contiguous (N, b, a) storage, written in place by the library."""
