"""Exceptions of the tsubu package.

Every problem a user can cause (a bad parameter, preset, scene or cache file)
raises one of these with a message that names the object, parameter or file
and says what to do. ValidationError carries *all* the problems found, so a
preset from someone else is reported in one go, not one error at a time.
"""
import reprlib

from ._native import _core

_EXCERPT = reprlib.Repr()
_EXCERPT.maxstring = _EXCERPT.maxother = 60
_EXCERPT.maxlist = _EXCERPT.maxtuple = _EXCERPT.maxdict = 6
_EXCERPT.maxlong = 40


def excerpt(value):
    """A value as a message quotes it: at most about 80 characters, whatever its size (a 200 MB
    list in a scene file must not become a 300 MB error line)."""
    return _EXCERPT.repr(value)


def shorten(text, limit=200):
    """Text (an error's own message) cut to `limit` characters for quoting in another."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."

CorruptFileError = _core.CorruptFileError
CancelledError = _core.CancelledError
UnstableError = _core.UnstableError


class ValidationError(ValueError):
    """One or more invalid values; .problems lists each one as a sentence."""

    def __init__(self, problems, context=""):
        self.problems = list(problems)
        self.context = context
        head = f"{context}: " if context else ""
        if len(self.problems) == 1:
            message = head + self.problems[0]
        else:
            message = head + f"{len(self.problems)} problems:\n" + "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(message)
