"""Helpers shared by the features."""


def tokens(text: str) -> list[str]:
    """The words of *text*, split on whitespace."""
    return text.split()
