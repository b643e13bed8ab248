import pytest

import paramlib


@pytest.mark.parametrize("name", paramlib.__all__)
def test_documented(name):
    assert getattr(paramlib, name).__doc__
