import pytest

from textkit import roman


def test_to_roman():
    assert roman.to_roman(1) == "I"
    assert roman.to_roman(1994) == "MCMXCIV"
    assert roman.to_roman(3999) == "MMMCMXCIX"
    for bad in (0, 4000, -5):
        with pytest.raises(ValueError):
            roman.to_roman(bad)
    with pytest.raises(TypeError):
        roman.to_roman(2.5)


def test_from_roman():
    assert roman.from_roman("XLII") == 42
    assert roman.from_roman(" mmxxvi ") == 2026
    for bad in ("", "IIII", "VX", "MMMM", "ABC"):
        with pytest.raises(ValueError):
            roman.from_roman(bad)
    assert all(roman.from_roman(roman.to_roman(n)) == n for n in range(1, 4000))
