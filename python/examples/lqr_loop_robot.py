"""LQR stabilisation of a bundled loop robot, designed from the analytical CE-ABA derivatives.

The robot (default models/cd_belt_leg.urdf: a planar leg whose hip, knee and ankle are driven
through gears and a belt; models/cd_four_bar.urdf: a crank-rocker with an implicit loop closure)
is held at an equilibrium y0 (ydot0 = 0) by the gravity-compensating efforts
tau0 = CE-RNEA(y0, 0, 0). The derivatives of CE-ABA there (Model.ce_aba_derivatives, through the
C API cdyn_ce_aba_derivatives) give the linearisation in the independent coordinates

    d/dt [dy; dydot] = A [dy; dydot] + B dtau,   A = [[0, I], [d ydd/d y, d ydd/d ydot]],
                                                 B = [0; H^-1]   (H^-1 = d ydd / d tau),

which is discretised exactly for a zero-order hold of period dt (matrix exponential of the
augmented [[A, B], [0, 0]] dt by scaling and squaring), and an infinite-horizon discrete LQR
u = tau0 - K [y - y0; ydot] is designed by iterating the discrete Riccati equation to its fixed
point (numpy only). The closed loop is then simulated with the library's CE-ABA
(Workspace.ce_aba_independent: loop closure + constraint-embedding ABA, RK4, torque held over each
period) from a perturbed state, next to the open loop (tau = tau0 held).

Writes lqr_<model>_states.png and lqr_<model>_efforts.png (matplotlib, Agg) into --out.
Usage: python3 lqr_loop_robot.py [--model PATH] [--y0 a,b,c] [--duration 3] [--dt 0.005]
                                 [--out DIR] [--check]
--check asserts the closed loop converges (|x(T) - x0| <= 1e-3 |x(0) - x0|), that the discrete
closed-loop eigenvalues lie inside the unit circle, and that the open loop does not converge
(exit 1 otherwise). Exit status 77 when matplotlib is not installed.
"""
import argparse
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # the package, when run from the repository

import clusterdyn as cd  # noqa: E402

DEFAULT_Y0 = {"cd_belt_leg": [0.6, 0.8, 0.3], "cd_four_bar": [1.0]}


def expm(M):
    """Matrix exponential by scaling and squaring with a degree-18 Taylor polynomial (M is
    small: the norm is scaled below 0.5, where the truncation error is below 1e-20)."""
    norm = np.abs(M).sum(axis=0).max()
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    X = M / 2.0**s
    E, term = np.eye(M.shape[0]), np.eye(M.shape[0])
    for k in range(1, 19):
        term = term @ X / k
        E = E + term
    for _ in range(s):
        E = E @ E
    return E


def linearise(model, q0, v0, tau0):
    """Continuous (A, B) at the closed equilibrium state (q0, v0 = 0) with efforts tau0."""
    ydd, dydd_dy, dydd_dydot, Hinv = model.ce_aba_derivatives(q0, v0, tau0, return_ydd=True)
    n = model.ny
    A = np.block([[np.zeros((n, n)), np.eye(n)], [dydd_dy, dydd_dydot]])
    B = np.vstack([np.zeros((n, n)), Hinv])
    return A, B, ydd


def discretise(A, B, dt):
    """Zero-order-hold discretisation: expm([[A, B], [0, 0]] dt) = [[Ad, Bd], [0, I]]."""
    n, m = B.shape
    M = np.zeros((n + m, n + m))
    M[:n, :n], M[:n, n:] = A, B
    E = expm(M * dt)
    return E[:n, :n], E[:n, n:]


def dlqr(Ad, Bd, Q, R, tol=1e-12, max_iter=100000):
    """K of the infinite-horizon discrete LQR: the fixed point of the Riccati iteration
    P <- Q + Ad^T P Ad - Ad^T P Bd (R + Bd^T P Bd)^-1 Bd^T P Ad."""
    P = Q.copy()
    for it in range(max_iter):
        S = R + Bd.T @ P @ Bd
        K = np.linalg.solve(S, Bd.T @ P @ Ad)
        Pn = Q + Ad.T @ P @ (Ad - Bd @ K)
        Pn = 0.5 * (Pn + Pn.T)
        if np.abs(Pn - P).max() <= tol * max(1.0, np.abs(Pn).max()):
            return np.linalg.solve(R + Bd.T @ Pn @ Bd, Bd.T @ Pn @ Ad), Pn, it + 1
        P = Pn
    raise RuntimeError("the Riccati iteration did not converge")


def simulate(ws, y_init, ydot_init, control, duration, dt, substeps=4):
    """RK4 on (y, ydot) with the library's CE-ABA; the effort control(y, ydot) is held over each
    period dt (substeps RK4 steps per period). Returns t, Y, YDOT, U."""
    def f(y, ydot, u):
        return ydot, ws.ce_aba_independent(y, ydot, u)[0]

    y, ydot = np.array(y_init, float), np.array(ydot_init, float)
    T, Y, YD, U = [], [], [], []
    h = dt / substeps
    for k in range(int(round(duration / dt)) + 1):
        u = control(y, ydot)
        T.append(k * dt), Y.append(y.copy()), YD.append(ydot.copy()), U.append(u.copy())
        for _ in range(substeps):
            k1 = f(y, ydot, u)
            k2 = f(y + 0.5 * h * k1[0], ydot + 0.5 * h * k1[1], u)
            k3 = f(y + 0.5 * h * k2[0], ydot + 0.5 * h * k2[1], u)
            k4 = f(y + h * k3[0], ydot + h * k3[1], u)
            y = y + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            ydot = ydot + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return np.array(T), np.array(Y), np.array(YD), np.array(U)


def run(path, y0, duration, dt, perturbation, seed=0):
    model = cd.Model.load(path)
    if model.nyq != model.ny:
        raise SystemExit(f"{path}: the example needs vector-space independent coordinates "
                         "(no floating base or ball joints)")
    ws = model.workspace()
    n = model.ny
    y0 = np.asarray(y0, float)
    zero = np.zeros(n)
    q0, v0 = ws.independent_to_spanning(y0, zero, q_guess=model.reference_configuration())
    tau0 = ws.ce_rnea(q0, v0, zero)  # gravity compensation: the equilibrium's efforts
    A, B, ydd0 = linearise(model, q0, v0, tau0)
    assert np.abs(ydd0).max() < 1e-9, "not an equilibrium"
    Ad, Bd = discretise(A, B, dt)
    H = ws.cluster_mass_matrix(q0)
    Q = np.diag(np.r_[100.0 * np.ones(n), 1.0 * np.ones(n)])
    R = np.diag(1.0 / np.maximum(np.diag(H), 1e-6)) * 1e-2  # efforts weighted by inertia
    K, P, iterations = dlqr(Ad, Bd, Q, R)
    poles = np.linalg.eigvals(Ad - Bd @ K)

    rng = np.random.default_rng(seed)
    y_init = y0 + perturbation * rng.uniform(-1, 1, n)
    ydot_init = 2 * perturbation * rng.uniform(-1, 1, n)
    ws.independent_to_spanning(y_init, ydot_init, q_guess=q0)  # warm start on y0's branch

    def lqr(y, ydot):
        return tau0 - K @ np.r_[y - y0, ydot]

    closed = simulate(ws, y_init, ydot_init, lqr, duration, dt)
    ws.independent_to_spanning(y_init, ydot_init, q_guess=q0)
    open_ = simulate(ws, y_init, ydot_init, lambda y, ydot: tau0, duration, dt)
    return dict(model=model, y0=y0, tau0=tau0, A=A, B=B, K=K, poles=poles,
                iterations=iterations, closed=closed, open=open_)


def error(traj, y0):
    _, Y, YD, _ = traj
    return np.sqrt(((Y - y0) ** 2).sum(1) + (YD ** 2).sum(1))


def plot(r, out, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = r["model"].independent_velocity_names
    fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for label, traj, style in (("LQR", r["closed"], "-"), ("open loop (tau0)", r["open"], ":")):
        t, Y, YD, _ = traj
        for k, name in enumerate(names):
            ax[0].plot(t, Y[:, k] - r["y0"][k], style, color=f"C{k}",
                       label=f"{name} ({label})")
            ax[1].plot(t, YD[:, k], style, color=f"C{k}")
    ax[0].set_ylabel("y - y0 [rad]")
    ax[1].set_ylabel("ydot [rad/s]")
    ax[1].set_xlabel("t [s]")
    ax[0].legend(fontsize=7, ncol=2)
    ax[0].set_title(f"{stem}: LQR from the CE-ABA derivatives vs open loop")
    fig.tight_layout()
    fig.savefig(out / f"lqr_{stem}_states.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    t, _, _, U = r["closed"]
    for k, name in enumerate(names):
        ax.plot(t, U[:, k], color=f"C{k}", label=name)
        ax.axhline(r["tau0"][k], color=f"C{k}", ls="--", lw=0.8)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("tau [N m]")
    ax.set_title("LQR efforts (dashed: gravity compensation tau0)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"lqr_{stem}_efforts.png", dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(REPO / "models" / "cd_belt_leg.urdf"))
    p.add_argument("--y0", default=None, help="equilibrium, comma-separated (ny values)")
    p.add_argument("--duration", type=float, default=3.0)
    p.add_argument("--dt", type=float, default=0.005)
    p.add_argument("--perturbation", type=float, default=0.15)
    p.add_argument("--out", default=".")
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: skipped")
        return 77
    cd.set_log_level("off")
    stem = pathlib.Path(args.model).stem
    y0 = ([float(x) for x in args.y0.split(",")] if args.y0
          else DEFAULT_Y0.get(stem, None))
    if y0 is None:
        raise SystemExit(f"give --y0 for {stem}")
    r = run(args.model, y0, args.duration, args.dt, args.perturbation)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(r, out, stem)
    ec, eo = error(r["closed"], r["y0"]), error(r["open"], r["y0"])
    print(f"{stem}: ny = {r['model'].ny}, y0 = {r['y0']}, tau0 = {np.round(r['tau0'], 4)}")
    print(f"  Riccati iterations: {r['iterations']}, max |closed-loop pole| = "
          f"{np.abs(r['poles']).max():.6f}")
    print(f"  |x - x0|: start {ec[0]:.3e}, LQR at T = {ec[-1]:.3e}, open loop at T = "
          f"{eo[-1]:.3e} (max {eo.max():.3e})")
    print(f"  plots: {out / f'lqr_{stem}_states.png'}, {out / f'lqr_{stem}_efforts.png'}")
    if args.check:
        failures = []
        if not np.abs(r["poles"]).max() < 1.0:
            failures.append("a closed-loop pole is outside the unit circle")
        if not ec[-1] <= 1e-3 * ec[0]:
            failures.append(f"the closed loop did not converge: {ec[-1]:.3e} > 1e-3 x {ec[0]:.3e}")
        if not eo[-1] > 0.1 * eo[0]:
            failures.append("the open loop converged too: the test would prove nothing")
        for f in failures:
            print("FAILED:", f)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
