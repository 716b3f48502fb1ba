"""Tests run against the add-on folder in the source tree (built in place by `make build`)."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "addon"))
sys.path.insert(0, os.path.dirname(__file__))
