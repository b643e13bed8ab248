"""Greetings."""

from minilib._util import clean


def greet(name: str) -> str:
    """Say hello to *name*, with its whitespace tidied."""
    return "Hello, " + clean(name) + "!"


def shout(name: str) -> str:
    """A greeting in capitals."""
    return greet(name).upper()


def farewell(name: str, formal: bool = False) -> str:
    """Say goodbye to *name*; formally when asked."""
    word = "Farewell" if formal else "Bye"
    return f"{word}, {clean(name)}."
