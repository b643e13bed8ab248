"""Numbers in words."""

from pep639lib._util import tokens

_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def parse_digits(text: str) -> int:
    """The number spelt digit by digit in *text* ("one two" is 12)."""
    n = 0
    for w in tokens(text.lower()):
        n = 10 * n + _DIGITS[w]
    return n


def spell(n: int) -> str:
    """*n* spelt digit by digit."""
    names = {v: k for k, v in _DIGITS.items()}
    return " ".join(names[int(d)] for d in str(n))
