import pytest

from pep639lib.numbers import parse_digits, spell


@pytest.mark.parametrize("text,n", [("one two", 12), ("Nine", 9), ("three zero one", 301)])
def test_parse_digits(text, n):
    assert parse_digits(text) == n


def test_spell():
    assert spell(407) == "four zero seven"
    assert parse_digits(spell(2026)) == 2026
