"""docs/scripting.md's examples run as written (each in its own process, from a folder holding what the
repository holds under docs/examples), and do what the text says they do."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT

DOC = os.path.join(ROOT, "docs", "scripting.md")


def examples():
    text = open(DOC, encoding="utf-8").read()
    return dict(re.findall(r"<!-- example: (\w+) -->\n```python\n(.*?)```", text, re.S))


def test_every_effect_has_an_example():
    assert sorted(examples()) == ["elastoplastic", "erosion", "fracture", "sand", "water"]


EXPECTED = {
    "water": ["status complete", "particles:", "crate height:", "surface grids: ['surface']"],
    "sand": ["frame 10 of 10", "status complete", "deepest dent:", "ball height:"],
    "fracture": ["pieces:", "status complete"],
    "erosion": ["'eroded'", "status complete"],
    "elastoplastic": ["lowest point:", "status complete"],
}


@pytest.mark.parametrize("effect", sorted(EXPECTED))
def test_example_runs_as_written(tmp_path, effect):
    shutil.copytree(os.path.join(ROOT, "docs", "examples"), tmp_path / "docs" / "examples")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "addon"))
    out = subprocess.run([sys.executable, "-c", examples()[effect]], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    for words in EXPECTED[effect]:
        assert words in out.stdout, (words, out.stdout[-3000:])
    assert os.path.isdir(tmp_path / "out" / "scripting" / effect)
