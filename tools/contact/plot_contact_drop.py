#!/usr/bin/env python3
"""Plots of the drop example (docs/contact.md, "A drop, in pictures").

    plot_contact_drop.py CONTACT_DROP MODELS_DIR OUT_DIR [--duration S]

runs the C++ example contact_drop (cd_parallel_walker falling on its four feet, loops kept
exact, with its --check oracles) and writes OUT_DIR/contact_drop.csv and three PNGs:
contact_forces.png (normal and tangential force per foot), loop_loads.png (force and moment
carried by each leg's loop joint, crank torques) and energy.png (kinetic, gravity, spring and
total energy). Exit 77 (skipped) without matplotlib, 1 when the example's checks fail.
"""
import os
import subprocess
import sys


try:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: numpy or matplotlib not importable ({e})")
    sys.exit(77)

LEGS = ("lf", "rf", "lh", "rh")


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__)
        return 2
    tool, models, out_dir = args[:3]
    duration = args[args.index("--duration") + 1] if "--duration" in args else "3.0"
    os.makedirs(out_dir, exist_ok=True)
    csv = os.path.join(out_dir, "contact_drop.csv")
    r = subprocess.run([tool, models, csv, "--duration", duration, "--check"])
    if r.returncode != 0:
        return 1
    d = np.genfromtxt(csv, delimiter=",", names=True)
    t = d["t"]

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for leg in LEGS:
        line, = ax.plot(t, d[f"{leg}_fn"], label=f"{leg} normal")
        ax.plot(t, d[f"{leg}_ft"], "--", color=line.get_color(), label=f"{leg} tangential")
    ax.set(xlabel="time (s)", ylabel="contact force (N, symlog)",
           title="cd_parallel_walker drop: foot contact forces (impulse / dt)")
    ax.set_yscale("symlog", linthresh=10.0)  # impact peaks and the standing load in one view
    ax.legend(ncol=2, fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "contact_forces.png"), dpi=110)

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for leg in LEGS:
        line, = a1.plot(t, d[f"{leg}_loop_force"], label=f"{leg} loop force (N)")
        a1.plot(t, d[f"{leg}_loop_moment"], ":", color=line.get_color(),
                label=f"{leg} loop moment (N m)")
        a2.plot(t, d[f"{leg}_crank_torque"], label=f"{leg} crank")
    a1.set_yscale("symlog", linthresh=10.0)
    a1.set(ylabel="|force|, |moment| (symlog)",
           title="transmission loads: the coupler-rocker loop joint of each leg")
    a1.legend(ncol=2, fontsize=8)
    a1.grid(alpha=0.3)
    a2.set(xlabel="time (s)", ylabel="crank torque (N m)")
    a2.legend(ncol=4, fontsize=8)
    a2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "loop_loads.png"), dpi=110)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    e0 = d["energy"][0]
    ax.plot(t, d["energy"] - e0, "k", lw=2, label="total - E(0)")
    ax.plot(t, d["kinetic"], label="kinetic")
    ax.plot(t, d["potential"] - d["potential"][0], label="gravity - V(0)")
    ax.plot(t, d["spring"], label="crank springs")
    ax.set(xlabel="time (s)", ylabel="energy (J)",
           title="energy: never increases (inelastic impacts, friction, damping)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "energy.png"), dpi=110)
    print(f"wrote {csv} and contact_forces.png, loop_loads.png, energy.png in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
