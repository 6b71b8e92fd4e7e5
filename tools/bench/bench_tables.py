#!/usr/bin/env python3
"""Markdown tables from the JSON of clusterdyn_bench / clusterdyn_bench_cluster (standard library).

Usage:
  bench_tables.py robots TREE.json CLUSTER.json   # robots: CE-ABA, CE-RNEA, H, C, tree ABA,
                                                  # ratios to generalized_rbda and to the tree ABA
  bench_tables.py tree TREE.json                  # tree algorithms vs the Pinocchio baselines
  bench_tables.py fig8 CLUSTER.json               # CE-ABA vs number of clusters (Chignoli et al. 2023, Fig. 8)
  bench_tables.py fig10 CLUSTER.json              # CE-ABA vs loop size (Chignoli et al. 2023, Fig. 10)

The JSON files come from --benchmark_format=json (or --benchmark_out=FILE) with repetitions;
the median aggregate is used when present, else the single run. Times in ns (real time).
"""

import json
import re
import sys
from collections import defaultdict

# Baselines quoted by the project's issues (median ns on this machine class, -march=native).
GRBDA = {  # generalized_rbda 45fa7c46: forward dynamics incl. kinematics, inverse dynamics
    ("CE_ABA", "mini_cheetah"): 57000, ("CE_ABA", "mit_humanoid"): 101000,
    ("CE_ABA", "four_bar"): 73000,
    ("CE_RNEA", "mini_cheetah"): 17000, ("CE_RNEA", "mit_humanoid"): 29000,
}


def load(path):
    """name -> (median real ns, entry) (entry holds the counters)."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
        elif name in out:
            continue
        t = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        out[name] = (t, b)
    return out


def fmt(x):
    return f"{x:,.0f}".replace(",", " ")


def robots(tree_path, cluster_path):
    cl = load(cluster_path)
    print("| model | nv | ny | clusters | CE-ABA | CE-RNEA | H | C | tree ABA (approx.) "
          "| CE-ABA / ABA | grbda FD / CE-ABA | grbda ID / CE-RNEA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model in ("mini_cheetah", "mit_humanoid", "four_bar"):
        key = f"CE_ABA/robot/{model}"
        if key not in cl:
            continue
        t_fd, e = cl[key]
        t_id = cl.get(f"CE_RNEA/robot/{model}", (None,))[0]
        t_h = cl.get(f"CLUSTER_H/robot/{model}", (None,))[0]
        t_c = cl.get(f"CLUSTER_C/robot/{model}", (None,))[0]
        t_aba = cl.get(f"ABA/robot/{model}_approximate", (None,))[0]
        cells = [model, int(e.get("nv", 0)), int(e.get("ny", 0)), int(e.get("clusters", 0)),
                 fmt(t_fd), fmt(t_id) if t_id else "-", fmt(t_h) if t_h else "-",
                 fmt(t_c) if t_c else "-", fmt(t_aba) if t_aba else "-",
                 f"{t_fd / t_aba:.2f}" if t_aba else "-",
                 f"{GRBDA[('CE_ABA', model)] / t_fd:.1f}x" if ("CE_ABA", model) in GRBDA else "-",
                 f"{GRBDA[('CE_RNEA', model)] / t_id:.1f}x"
                 if t_id and ("CE_RNEA", model) in GRBDA else "-"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print()
    print("| bundled model | nv | ny | clusters | CE-ABA | CE-RNEA | H | C |")
    print("|---|---|---|---|---|---|---|---|")
    for name in sorted(n for n in cl if n.startswith("CE_ABA/bundled/")):
        model = name.split("/")[-1]
        t_fd, e = cl[name]
        row = [model, int(e.get("nv", 0)), int(e.get("ny", 0)), int(e.get("clusters", 0)),
               fmt(t_fd)]
        for algo in ("CE_RNEA", "CLUSTER_H", "CLUSTER_C"):
            t = cl.get(f"{algo}/bundled/{model}", (None,))[0]
            row.append(fmt(t) if t else "-")
        print("| " + " | ".join(str(c) for c in row) + " |")


def tree(tree_path):
    tr = load(tree_path)
    models = sorted({n.split("/")[-1] for n in tr})
    # Against Pinocchio only side by side, in the same run: tools/bench/side_by_side.py.
    print("| model | nv | FK | RNEA | ABA | CRBA |")
    print("|---|---|---|---|---|---|")
    for m in models:
        row = [m]
        nv = None
        times = {}
        for algo in ("FK", "RNEA", "ABA", "CRBA"):
            hit = [v for n, v in tr.items() if n.startswith(algo + "/") and n.split("/")[-1] == m]
            if hit:
                times[algo] = hit[0][0]
                nv = int(hit[0][1].get("nv", 0))
        row.append(nv if nv is not None else "-")
        row += [fmt(times[a]) if a in times else "-" for a in ("FK", "RNEA", "ABA", "CRBA")]
        print("| " + " | ".join(str(c) for c in row) + " |")


def fig8(cluster_path):
    cl = load(cluster_path)
    rows = defaultdict(dict)  # (family, B, D) -> {ce, aba, clusters}
    for name, (t, e) in cl.items():
        m = re.match(r"(CE_ABA|ABA)/fig8/(approx_)?(\w+?)_branch_(\d+)_(\d+)$", name)
        if not m:
            continue
        key = (m.group(3), int(m.group(4)), int(m.group(5)))
        rows[key]["CE" if m.group(1) == "CE_ABA" else "ABA"] = t
        if m.group(1) == "CE_ABA":
            rows[key]["clusters"] = int(e.get("clusters", 0))
    for family in sorted({k[0] for k in rows}):
        print(f"\n**{family}** (CE-ABA ns; per cluster in parentheses; tree ABA on the "
              "approximation)\n")
        branches = sorted({k[1] for k in rows if k[0] == family})
        depths = sorted({k[2] for k in rows if k[0] == family})
        print("| depth D | " + " | ".join(f"B = {b}" for b in branches) + " |")
        print("|---|" + "---|" * len(branches))
        for d in depths:
            cells = []
            for b in branches:
                r = rows.get((family, b, d))
                if not r or "CE" not in r:
                    cells.append("-")
                    continue
                per = r["CE"] / max(r.get("clusters", 1), 1)
                aba = f", ABA {fmt(r['ABA'])}" if "ABA" in r else ""
                cells.append(f"{fmt(r['CE'])} ({per:.0f}{aba})")
            print(f"| {d} | " + " | ".join(cells) + " |")


def fig10(cluster_path):
    cl = load(cluster_path)
    rows = defaultdict(dict)
    for name, (t, e) in cl.items():
        m = re.match(r"(CE_ABA|ABA)/fig10/(\w+)/depth(\d+)/(approx_)?loop_size(\d+)$", name)
        if not m:
            continue
        key = (m.group(2), int(m.group(3)), int(m.group(5)))
        rows[key]["CE" if m.group(1) == "CE_ABA" else "ABA"] = t
        if m.group(1) == "CE_ABA":
            rows[key]["cb"] = int(e.get("max_cluster_bodies", 0))
    print("| constraint | depth | loop size | bodies in the loop cluster | CE-ABA | tree ABA "
          "(approx.) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        r = rows[key]
        if "CE" not in r:
            continue
        ratio = f"{r['CE'] / r['ABA']:.2f}" if "ABA" in r else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {r.get('cb', '-')} | {fmt(r['CE'])} | "
              f"{fmt(r['ABA']) if 'ABA' in r else '-'} | {ratio} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what = sys.argv[1]
    if what == "robots" and len(sys.argv) == 4:
        robots(sys.argv[2], sys.argv[3])
    elif what == "tree":
        tree(sys.argv[2])
    elif what == "fig8":
        fig8(sys.argv[2])
    elif what == "fig10":
        fig10(sys.argv[2])
    else:
        sys.exit(__doc__)
