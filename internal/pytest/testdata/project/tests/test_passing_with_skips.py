"""A file whose tests pass, skip or xfail: pytest exits 0."""
import pytest


def test_passes():
    assert True


@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfails():
    assert 0
