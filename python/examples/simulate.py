"""Passive simulation of two bundled loop robots for 2 s, with pictures.

* models/cd_belt_leg.urdf: a planar leg whose hip, knee and ankle are driven through gears and
  a belt (explicit constraints: rotor angles are fixed multiples of the joint angles);
* models/cd_six_bar.urdf: a Watt II six-bar linkage (two implicit loop closures).

Each robot starts at rest or with a crank velocity, unactuated, under gravity. The integrator
is semi-implicit (symplectic) Euler on the closed spanning state, with the C API's loop
handling after every step:

    ydd, qdd = CE-ABA(q, v, tau = 0)                 (constraint-embedding ABA)
    ydot    <- ydot + dt ydd                          (independent velocities)
    v       <- G(q) ydot                              (closed spanning velocity)
    q       <- q (+) v dt                             (cdyn_integrate)
    (q, v)  <- projection onto the loop constraints    (cdyn_project_to_constraints)

The transmission torques are the generalized forces the constraints exert on the spanning-tree
joints, tau_c = RNEA_tree(q, v, qdd) - tau_applied (= K^T lambda, and G^T tau_c = 0): for a
rotor joint it is the torque the gear or belt applies to the rotor [N m].

Writes simulate_joints.png, simulate_energy.png and simulate_transmission.png (matplotlib, Agg).
Usage: python3 simulate.py [--out DIR] [--duration 2.0] [--dt 0.00025] [--check]
--check also asserts energy drift, closure residual and G^T tau_c = 0 (exit 1 if violated).
Exit status 77 when matplotlib is not installed.
"""
import argparse
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # the package, when run from the repository

import clusterdyn as cd  # noqa: E402


def simulate(path, y0, ydot0, duration, dt):
    """Runs the passive simulation; returns a dict of time series (SI units)."""
    model = cd.Model.load(path)
    ws = model.workspace()
    q, v = ws.independent_to_spanning(y0, ydot0, q_guess=model.reference_configuration())
    tau = np.zeros(model.ny)
    steps = int(round(duration / dt))
    out = {"model": model, "t": [], "q": [], "energy": [], "kinetic": [], "tau_c": [],
           "closure": [], "gt_tau": []}
    for k in range(steps + 1):
        ydd, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
        tau_c = ws.rnea(q, v, qdd)  # no applied spanning efforts: all of it is constraint force
        G, _ = ws.constraint_matrices(q, v)
        out["t"].append(k * dt)
        out["q"].append(q.copy())
        out["kinetic"].append(ws.kinetic_energy(q, v))
        out["energy"].append(out["kinetic"][-1] + ws.potential_energy(q))
        out["tau_c"].append(tau_c)
        out["gt_tau"].append(np.abs(G.T @ tau_c).max())
        if k == steps:
            break
        _, ydot = ws.spanning_to_independent(q, v)
        ydot = ydot + dt * ydd
        v = G @ ydot
        q_new = ws.integrate(q, v, dt)
        q, v = ws.project_to_constraints(q_new, v)
        out["closure"].append(np.abs(q - q_new).max())  # how far the step left the manifold
    for key in ("t", "q", "energy", "kinetic", "tau_c", "gt_tau", "closure"):
        out[key] = np.array(out[key])
    return out


def dependent_joints(model):
    _, vidx = model.independent_indices()
    return [i for i in range(model.nv) if i not in set(vidx.tolist())]


def plot(runs, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    leg, six = runs
    outdir.mkdir(parents=True, exist_ok=True)

    # 1. Joint trajectories.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for ax, run, title in ((axes[0], leg, "cd_belt_leg (gears + belt)"),
                           (axes[1], six, "cd_six_bar (two loops)")):
        m = run["model"]
        pidx, _ = m.independent_indices()
        for i in range(m.nq):
            if "rotor" in m.position_names[i]:
                continue  # rotor angles are 6-10x the joint angles: shown by the couplings
            style = "-" if i in set(pidx.tolist()) else "--"
            ax.plot(run["t"], np.degrees(run["q"][:, i]), style, label=m.position_names[i])
        ax.set(title=title, xlabel="time [s]", ylabel="joint angle [deg]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, title="solid: independent, dashed: dependent", title_fontsize=8)
    fig.savefig(outdir / "simulate_joints.png", dpi=110)
    plt.close(fig)

    # 2. Energy drift.
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    for run, name in ((leg, "cd_belt_leg"), (six, "cd_six_bar")):
        e = run["energy"]
        ax.plot(run["t"], (e - e[0]) * 1e3, label=f"{name} (E(0) = {e[0]:.4f} J)")
    ax.set(title="Total energy drift, semi-implicit Euler, dt = "
           f"{leg['t'][1] * 1e3:g} ms, passive", xlabel="time [s]", ylabel="E(t) - E(0) [mJ]")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.savefig(outdir / "simulate_energy.png", dpi=110)
    plt.close(fig)

    # 3. Transmission torques: the torque each gear / belt applies to its rotor.
    m = leg["model"]
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    for i in dependent_joints(m):
        tc = leg["tau_c"][:, i]
        k = int(np.argmax(np.abs(tc)))
        ax.plot(leg["t"], tc * 1e3, label=f"{m.velocity_names[i]} (max |.| {abs(tc[k]) * 1e3:.2f}"
                " mN m)")
        ax.plot(leg["t"][k], tc[k] * 1e3, "k.", ms=6)
    ax.set(title="cd_belt_leg: torque of each gear / belt on its rotor",
           xlabel="time [s]", ylabel="torque [mN m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    fig.savefig(outdir / "simulate_transmission.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "images")
    ap.add_argument("--duration", type=float, default=2.0, help="simulated time [s]")
    ap.add_argument("--dt", type=float, default=2.5e-4, help="time step [s]")
    ap.add_argument("--check", action="store_true", help="assert the physics checks")
    args = ap.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib): skipped")
        return 77
    cd.set_log_level("off")
    leg = simulate(REPO / "models" / "cd_belt_leg.urdf", [0.6, -0.9, 0.4], [0.0, 0.0, 0.0],
                   args.duration, args.dt)
    six = simulate(REPO / "models" / "cd_six_bar.urdf", [0.0], [6.0], args.duration, args.dt)
    plot((leg, six), args.out)
    ok = True
    for run in (leg, six):
        m, e = run["model"], run["energy"]
        drift = np.abs(e - e[0]).max()
        kinetic = run["kinetic"].max()
        print(f"{m.name}: {len(run['t']) - 1} steps of {args.dt} s, energy {e[0]:.6f} J, max "
              f"drift {drift:.3e} J, max projection step {run['closure'].max():.2e}, "
              f"max |G^T tau_c| {run['gt_tau'].max():.1e}, "
              f"max kinetic {kinetic:.4f} J, max |tau_c| {np.abs(run['tau_c']).max():.4f}")
        if args.check:
            # First-order integrator: the drift stays a small part of the energy exchanged.
            ok &= drift < 0.1 * kinetic
            ok &= run["gt_tau"].max() < 1e-9
            ok &= np.abs(np.diff(run["q"], axis=0)).max() > 1e-4  # it moved
    print("images in", args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
