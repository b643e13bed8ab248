"""Words."""

from pep639lib._util import tokens


def initials(text: str) -> str:
    """The first letter of each word of *text*, in capitals."""
    return "".join(w[0].upper() for w in tokens(text))


def title(text: str) -> str:
    """*text* with each word capitalised."""
    return " ".join(w.capitalize() for w in tokens(text))
