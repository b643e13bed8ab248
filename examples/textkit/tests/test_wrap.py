import pytest

from textkit import wrap

from helpers import block, widths


def test_shorten():
    assert wrap.shorten("Hello   world", 20) == "Hello world"
    assert wrap.shorten("The quick brown fox jumps", 15) == "The quick..."
    assert wrap.shorten("Supercalifragilistic", 5) == "..."


def test_wrap_lines():
    text = "The quick brown fox jumps over the lazy dog"
    assert wrap.wrap(text, 10) == ["The quick", "brown fox", "jumps over", "the lazy", "dog"]
    assert wrap.wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]
    assert wrap.wrap("abcdefghij xy", 4, break_long_words=False) == ["abcdefghij", "xy"]
    assert wrap.wrap("   ", 5) == []
    with pytest.raises(ValueError):
        wrap.wrap("text", 0)


def test_fill_indent():
    assert wrap.fill("one two three four", 9) == "one two\nthree\nfour"
    assert wrap.fill("one two three four", 11, indent="> ") == "> one two\n> three\n> four"


@pytest.mark.parametrize("width", [5, 8, 13, 21, 34])
def test_wrap_never_exceeds_width(width):
    text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor"
    lines = wrap.wrap(text, width)
    assert max(widths("\n".join(lines))) <= width
    assert " ".join(lines).replace(" ", "") == text.replace(" ", "")


def test_indent():
    assert wrap.indent("a\n\nb\n", "> ") == "> a\n\n> b\n"
    assert wrap.indent("a\n\nb", "# ", predicate=lambda line: True) == "# a\n# \n# b"
    assert wrap.indent("", "> ") == ""


def test_dedent():
    text = "    def f():\n        return 1\n\n    x = f()"
    assert wrap.dedent(text) == "def f():\n    return 1\n\nx = f()"
    assert wrap.dedent("  a\n    \n  b") == "a\n\nb"
    assert wrap.dedent("   \n  ") == "\n"
    assert wrap.dedent("\ta\n  b") == "\ta\n  b"


def test_hanging_indent():
    out = wrap.hanging_indent("one two three four five six", 14, "Note: ")
    assert out == block(
        """
        Note: one two
              three
              four
              five six
        """
    )
    assert wrap.hanging_indent("alpha beta", 8, "- ", "  ") == "- alpha\n  beta"


def test_wrap_paragraphs():
    text = "aa bb cc\ndd\n\n\n   ee ff  "
    assert wrap.wrap_paragraphs(text, 5) == "aa bb\ncc dd\n\nee ff"
    assert wrap.wrap_paragraphs("") == ""
