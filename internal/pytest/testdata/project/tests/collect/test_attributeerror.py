"""AttributeError while importing the test module."""
import os

CONST = os.no_such_attribute


def test_never_runs():
    assert CONST
