"""Renders the cluster tree of a model with Graphviz: Model.cluster_tree_dot() | dot -Tsvg.

Usage: python3 cluster_tree.py MODEL.urdf OUT.svg|OUT.png
The same picture from the shell:  clusterdyn dot MODEL.urdf | dot -Tsvg -o OUT.svg
Exit status 77 when Graphviz (dot) is not installed.
"""
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import clusterdyn as cd  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    model_path, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    dot = shutil.which("dot")
    if dot is None:
        print("Graphviz 'dot' is not installed (Debian: graphviz): skipped")
        return 77
    model = cd.Model.load(model_path)
    text = model.cluster_tree_dot()
    fmt = out.suffix.lstrip(".") or "svg"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([dot, f"-T{fmt}", "-o", str(out)], input=text.encode(), check=True)
    data = out.read_bytes()
    ok = data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data
    # Every cluster of the model appears in the picture.
    if fmt == "svg":
        ok &= all(name.encode() in data for name in model.body_names)
    print(f"{model.name}: {model.nclusters} clusters, {model.nbodies} bodies -> {out} "
          f"({len(data)} bytes)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
