"""Tests run against the add-on folder in the source tree (built in place by `make build`)."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "addon"))
sys.path.insert(0, os.path.dirname(__file__))


import pytest  # noqa: E402


@pytest.fixture
def checkpoint_every_frame(monkeypatch):
    """Resume tests restore from the frame they cancelled at: the solver's state saved after every
    frame (real bakes save it about every 30 s)."""
    import tsubu.baking
    monkeypatch.setattr(tsubu.baking, "CHECKPOINT_SECONDS", 0.0)


def pytest_configure(config):
    config.addinivalue_line("markers", "physics_long: a long physical run (seconds of simulated time); the second "
                                       "interpreter's run (Python 3.13, which checks the ABI and NumPy 2) skips it")
