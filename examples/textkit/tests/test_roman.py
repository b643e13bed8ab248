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


@pytest.mark.parametrize(
    "number, numeral",
    [(4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"), (944, "CMXLIV"), (2024, "MMXXIV")],
)
def test_subtractive_pairs(number, numeral):
    assert roman.to_roman(number) == numeral
    assert roman.from_roman(numeral.lower()) == number


def test_to_roman_rejects_bool():
    with pytest.raises(TypeError, match="expected an int, got bool"):
        roman.to_roman(True)


@pytest.mark.parametrize("text, expected", [("XII", True), ("xii", True), ("IIII", False), ("", False), ("IC", False)])
def test_is_roman(text, expected):
    assert roman.is_roman(text) is expected
