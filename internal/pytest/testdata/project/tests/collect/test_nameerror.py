"""NameError while importing the test module."""

value = undefined_at_import  # noqa: F821


def test_never_runs():
    assert value


def test_never_runs_either():
    pass
