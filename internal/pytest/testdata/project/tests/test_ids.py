"""Node ids with spaces, brackets, "::", "/", " - " and non-ASCII text."""
import pytest

PARAMS = [
    "plain",
    "with space",
    "a::b",
    "path/to/file.py",
    "x - y",
    "br[ack]et",
    "caf\u00e9",
    "tab\there",
    "a - b::c [d] / e",
]


@pytest.mark.parametrize("value", PARAMS)
def test_param(value):
    assert value != "x - y", "failure of the id with ' - '"


@pytest.mark.parametrize(
    "a,b",
    [(1, 2), (3, 4)],
    ids=["one - two", "three [four]"],
)
def test_explicit_ids(a, b):
    assert a + 1 == b or a == 3


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("s", ["x y"])
def test_stacked(s, n):
    assert n == 1


def test_crème():
    assert True


class TestOuter:
    def test_method(self):
        assert True

    @pytest.mark.parametrize("v", ["p q", "r::s"])
    def test_param_method(self, v):
        assert "::" not in v

    class TestInner:
        def test_nested(self):
            assert True

        def test_nested_fails(self):
            assert 1 == 2

        class TestDeeper:
            @pytest.mark.parametrize("w", ["1 - 2"])
            def test_deep(self, w):
                assert w
