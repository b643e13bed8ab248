"""ImportError while importing the test module (a name missing from a module)."""
from os import no_such_name


def test_never_runs():
    assert no_such_name
