"""The walk-through of docs/python.md runs as written."""
import os
import re

from conftest import REPO


def test_walkthrough_runs():
    doc = (REPO / "docs" / "python.md").read_text()
    block = re.search(r"## A walk-through\n\n```python\n(.*?)```", doc, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(REPO)  # the example loads models/... relative to the repository
    try:
        scope = {}
        exec(compile(block, "docs/python.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    assert abs(scope["tau"][0] - 0.1) < 1e-9
    assert scope["J"].shape == (6, 3) and scope["H"].shape == (1, 1)
