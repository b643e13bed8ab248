"""Roman numerals from 1 to 3999."""

from __future__ import annotations

_NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number: int) -> str:
    """Write *number* (1 to 3999) as a canonical Roman numeral."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"expected an int, got {type(number).__name__}")
    if not 0 < number < 4000:
        raise ValueError(f"{number} is out of range (1 to 3999)")
    out = []
    for value, numeral in _NUMERALS:
        count, number = divmod(number, value)
        out.append(numeral * count)
    return "".join(out)


def from_roman(text: str) -> int:
    """Read a canonical Roman numeral, in either case.

    Non-canonical forms such as "IIII" or "VX" raise ValueError.
    """
    numeral = text.strip().upper()
    total, i = 0, 0
    for value, symbol in _NUMERALS:
        while numeral.startswith(symbol, i):
            total += value
            i += len(symbol)
    if not numeral or i != len(numeral) or not 0 < total < 4000 or to_roman(total) != numeral:
        raise ValueError(f"invalid Roman numeral {text!r}")
    return total


def is_roman(text: str) -> bool:
    """Tell whether *text* is a canonical Roman numeral that from_roman reads."""
    try:
        from_roman(text)
    except ValueError:
        return False
    return True
