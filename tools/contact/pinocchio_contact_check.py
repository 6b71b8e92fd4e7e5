#!/usr/bin/env python3
"""The contact problems of clusterdyn (Delassus G, drift g, cones) solved by Pinocchio 4.1's
ADMMConstraintSolver and PGSConstraintSolver: the same velocities G lambda + g, hence the same
generalized impulses J^T lambda, and the same impulses lambda where G is definite
(docs/contact.md, "Pinocchio cross-check").

    pinocchio_contact_check.py CONTACT_DUMP MODELS_DIR URDFPLUS_DIR [--keep FILE]

runs the C++ tool contact_dump (which solves each problem with clusterdyn's ADMM and PGS) and
solves the dumped problems with Pinocchio through its Python bindings (pip package `pin`).
Exit 77 (skipped) when pinocchio cannot be imported, 1 on any mismatch.

Mapping to Pinocchio's constraint models (only their cones are used by the solvers; a dummy
model with one free-flyer joint carries them): a Coulomb block (t1, t2, n) is a
PointContactConstraintModel with the same friction (its cone has the normal last, as ours); a
Bilateral block of 3 rows a PointAnchorConstraintModel, of 6 rows a FrameAnchorConstraintModel;
other bilateral sizes are padded to 3 or 6 rows with rows decoupled from the rest (G_ii = 1,
g_i = 0, so lambda_i = 0 and the other rows' problem is unchanged); Inactive blocks (lambda = 0)
are dropped.
"""
import os
import subprocess
import sys
import tempfile


try:
    import numpy as np
    import pinocchio as pin
except ImportError as e:  # pragma: no cover - depends on the environment
    print(f"SKIPPED: numpy or pinocchio not importable ({e}); pip install pin", flush=True)
    sys.exit(77)

TOL = 1e-11           # the solvers' stopping tolerance (clusterdyn: 1e-12, see contact_dump)
VEL_TOL = 1e-8        # m/s, |G (lambda_a - lambda_b)|_inf
IMPULSE_RTOL = 1e-6   # relative to |lambda|_inf, only where G is definite
RANK_RTOL = 1e-9      # G is definite when its smallest eigenvalue > RANK_RTOL * largest


def read_problems(path):
    problems, cur = [], None
    with open(path) as f:
        for line in f:
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "problem":
                cur = {"name": tok[1], "m": int(tok[2]), "blocks": []}
                problems.append(cur)
            elif tok[0] == "block":
                cur["blocks"].append((tok[1], int(tok[2]), int(tok[3]), float(tok[4])))
            elif tok[0] == "G":
                m = cur["m"]
                cur["G"] = np.array(tok[1:], dtype=float).reshape(m, m)
            elif tok[0] == "g":
                cur["g"] = np.array(tok[1:], dtype=float)
            elif tok[0] in ("admm", "pgs"):
                cur[tok[0]] = {"status": tok[1], "iterations": int(tok[2]),
                               "residuals": [float(t) for t in tok[3:6]],
                               "lambda": np.array(tok[6:], dtype=float)}
    return problems


def oracle_residual(G, g, blocks, lam):
    """Feasibility and De Saxce complementarity from the definitions (as the C++ test oracle)."""
    v = G @ lam + g
    worst = 0.0
    for kind, r0, rows, mu in blocks:
        l, s = lam[r0:r0 + rows], v[r0:r0 + rows]
        if kind == "bilateral":
            worst = max(worst, np.abs(s).max())
        elif kind == "inactive":
            worst = max(worst, np.abs(l).max())
        else:
            st = np.linalg.norm(s[:2])
            sn = s[2] + mu * st
            worst = max(worst, -l[2], np.linalg.norm(l[:2]) - mu * l[2], mu * st - sn)
            ln = np.abs(l).max()
            if ln > 0:
                worst = max(worst, abs(l[:2] @ s[:2] + l[2] * sn) / ln)
    return worst


def pinocchio_problem(p):
    """(G, g, models, datas, rows) in Pinocchio's terms; rows maps them back to ours."""
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "carrier")
    models, datas = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    rows = []  # per Pinocchio row: our row index, or -1 for padding
    for kind, r0, n, mu in p["blocks"]:
        if kind == "inactive":
            continue
        if kind == "coulomb":
            c = pin.PointContactConstraintModel(model, 1)
            c.setFriction(mu)
            size = 3
        else:
            size = 3 if n <= 3 else 6
            c = (pin.PointAnchorConstraintModel if size == 3 else pin.FrameAnchorConstraintModel)(
                model, 1)
        cm = pin.ConstraintModel(c)
        models.append(cm)
        datas.append(cm.createData())
        rows += list(range(r0, r0 + n)) + [-1] * (size - n)
    rows = np.array(rows)
    mp = len(rows)
    G, g = np.eye(mp), np.zeros(mp)
    ours = rows >= 0
    G[np.ix_(ours, ours)] = p["G"][np.ix_(rows[ours], rows[ours])]
    g[ours] = p["g"][rows[ours]]
    return G, g, models, datas, rows


def solve_pinocchio(p, which):
    G, g, models, datas, rows = pinocchio_problem(p)
    if which == "admm":
        solver, st, res = (pin.ADMMConstraintSolver(len(g)), pin.ADMMSolverSettings(),
                           pin.ADMMSolverResult())
    else:
        solver, st, res = (pin.PGSConstraintSolver(len(g)), pin.PGSSolverSettings(),
                           pin.PGSSolverResult())
    st.absolute_feasibility_tol = TOL
    st.absolute_complementarity_tol = TOL
    st.relative_feasibility_tol = 0.0
    st.relative_complementarity_tol = 0.0
    st.max_iterations = 100000
    ok = solver.solve(pin.DelassusOperatorDense(G), g, models, datas, st, res)
    lam_p = np.asarray(res.retrieveConstraintImpulses()).ravel()
    lam = np.zeros(p["m"])
    lam[rows[rows >= 0]] = lam_p[rows >= 0]
    return bool(ok and res.converged), res.iterations, lam, np.abs(lam_p[rows < 0]).max(initial=0.0)


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    dump_tool, models_dir, urdfplus_dir = sys.argv[1:4]
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or os.path.join(tmp, "contact_problems.txt")
        subprocess.run([dump_tool, models_dir, urdfplus_dir, path], check=True)
        problems = read_problems(path)
    print(f"Pinocchio {pin.__version__}, {len(problems)} problems")
    print(f"{'problem':26s} {'m':>3s} {'definite':>8s} {'solver':>6s} {'it cd':>6s} {'it pin':>6s}"
          f" {'|dv|':>9s} {'|dl|/|l|':>9s} {'resid pin':>9s}")
    failures, notes, compared = [], [], 0
    for p in problems:
        G, g = p["G"], p["g"]
        ev = np.linalg.eigvalsh(G)
        definite = ev[0] > RANK_RTOL * ev[-1]
        for which in ("admm", "pgs"):
            ours = p[which]
            if ours["status"] != "ok":
                failures.append(f"{p['name']}: clusterdyn {which} did not converge")
                continue
            lam = ours["lambda"]
            conv, it, lam_pin, pad = solve_pinocchio(p, which)
            dv = np.abs(G @ (lam - lam_pin)).max()
            scale = max(np.abs(lam).max(), 1e-300)
            dl = np.abs(lam - lam_pin).max() / scale
            res_pin = oracle_residual(G, g, p["blocks"], lam_pin)
            res_cd = oracle_residual(G, g, p["blocks"], lam)
            print(f"{p['name']:26s} {p['m']:3d} {str(definite):>8s} {which:>6s} "
                  f"{ours['iterations']:6d} {it:6d} {dv:9.2e} {dl:9.2e} {res_pin:9.2e}")
            if not conv:
                if which == "pgs" and not definite:
                    # Pinocchio 4.1's PGS stalls on the walker standing on four feet (12 rows
                    # on 10 coordinates, G singular); clusterdyn's PGS (one tangent step
                    # 1 / max(G_t1t1, G_t2t2)) converges there. Reported, not a failure.
                    notes.append(f"{p['name']}: Pinocchio PGS did not converge in {it} "
                                 f"iterations on this singular G (residual {res_pin:.2e})")
                else:
                    failures.append(f"{p['name']}: Pinocchio {which} did not converge")
                continue
            if res_cd > 1e-9:
                failures.append(f"{p['name']} {which}: clusterdyn residual {res_cd:.2e}")
            if res_pin > 1e-9:
                failures.append(f"{p['name']} {which}: Pinocchio residual {res_pin:.2e}")
            if pad > 1e-9:
                failures.append(f"{p['name']} {which}: padding rows carry {pad:.2e}")
            if dv > VEL_TOL:
                failures.append(f"{p['name']} {which}: velocities differ by {dv:.2e} m/s")
            if definite and dl > IMPULSE_RTOL:
                failures.append(f"{p['name']} {which}: impulses differ by {dl:.2e} (relative)")
            compared += 1
    names = {p["name"] for p in problems}
    for need in ("walker_sticking", "walker_sliding", "walker_sticking_looprows",
                 "walker_sliding_looprows"):
        if need not in names:
            failures.append(f"problem {need} missing from the dump")
    if compared < 12:
        failures.append(f"only {compared} solutions compared")
    for n in notes:
        print("NOTE:", n)
    for f in failures:
        print("FAIL:", f)
    print(f"OK: {compared} solutions compared" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
