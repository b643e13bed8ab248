"""Identifier cases from any text."""

from wordcase import split_words


def snake(text: str) -> str:
    """Lower-case words joined by underscores: ``snake("Hello World") == "hello_world"``."""
    return "_".join(w.lower() for w in split_words(text))


def kebab(text: str) -> str:
    """Lower-case words joined by hyphens: ``kebab("Hello World") == "hello-world"``."""
    return "-".join(w.lower() for w in split_words(text))


def camel(text: str) -> str:
    """The first word lower-case, the others capitalized, joined: ``camel("hello big world") == "helloBigWorld"``."""
    words = [w.lower() for w in split_words(text)]
    if not words:
        return ""
    return words[0] + "".join(w.capitalize() for w in words[1:])


def title(text: str) -> str:
    """Capitalized words joined by spaces: ``title("hello_world") == "Hello World"``."""
    return " ".join(w.capitalize() for w in split_words(text))
