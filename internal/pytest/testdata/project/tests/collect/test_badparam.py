"""A parametrize error: collection fails for one function only."""
import pytest


@pytest.mark.parametrize("x", [1])
def test_bad_param(y):
    pass


def test_fine():
    pass
