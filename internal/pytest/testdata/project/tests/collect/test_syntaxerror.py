"""SyntaxError in the test module."""


def test_never_runs(:
    pass
