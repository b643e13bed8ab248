import pytest

from textkit import wrap


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
