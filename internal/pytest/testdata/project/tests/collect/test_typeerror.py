"""TypeError while importing the test module."""

CONST = len(5)


def test_never_runs():
    assert CONST
