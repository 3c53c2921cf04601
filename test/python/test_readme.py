"""The README's Python example, run as it is written: its calls and keywords exist and
do what its comments say (pytest in an empty project: exit 5, "no tests ran", one
stream; no site asked for)."""
from __future__ import annotations

import asyncio
import os
import re
import shutil

import pytest

from conftest import ROOT


def test_readme_example_runs_verbatim(folder: str) -> None:
    if shutil.which("pytest") is None and shutil.which("pytest-3") is None:
        pytest.skip("no pytest on this machine for the example to run")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks, "the README has a Python example"
    ns: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)  # noqa: S102 - the project's own README
    asked = []

    def ask_person(host: str, port: int) -> bool:
        asked.append((host, port))
        return False

    printed = []
    ns["print"] = lambda *a, **k: printed.append(" ".join(str(x) for x in a))
    asyncio.run(ns["conversation"](folder, ask_person))
    assert printed and printed[0].startswith("5 "), printed
    assert "no tests ran" in printed[0]
    assert asked == []
