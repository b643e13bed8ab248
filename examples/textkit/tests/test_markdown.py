import pytest

from textkit import markdown

from helpers import block


def test_escape():
    assert markdown.escape("a*b_c|d") == r"a\*b\_c\|d"
    assert markdown.escape("[x](y) #1 `z`") == r"\[x\](y) \#1 \`z\`"
    assert markdown.escape("plain text") == "plain text"


def test_heading():
    assert markdown.heading("Usage") == "# Usage"
    assert markdown.heading("  Usage   notes ", 2) == "## Usage notes"
    with pytest.raises(ValueError):
        markdown.heading("x", 7)


def test_link():
    assert markdown.link("docs", "https://example.org") == "[docs](https://example.org)"
    assert markdown.link("a [b]", "http://x.org/a b", "T") == '[a \\[b\\]](http://x.org/a%20b "T")'


@pytest.mark.parametrize(
    "ordered, expected",
    [
        (False, "- a\n  - b\n  - c\n    - d\n- e"),
        (True, "1. a\n   1. b\n   2. c\n      1. d\n2. e"),
    ],
)
def test_bullet_list(ordered, expected):
    assert markdown.bullet_list(["a", ["b", "c", ["d"]], "e"], ordered=ordered) == expected


def test_bullet_list_start():
    assert markdown.bullet_list(["x", "y"], ordered=True, start=9) == "9. x\n10. y"
    assert markdown.bullet_list([]) == ""


def test_blockquote():
    assert markdown.blockquote("one\ntwo") == "> one\n> two"
    assert markdown.blockquote("one two three four five\n\nsix", width=12) == block(
        """
        > one two
        > three four
        > five
        >
        > six
        """
    )


def test_markdown_table():
    out = markdown.markdown_table([["apple", 3], ["a|b", None]], ["fruit", "qty"], align="lr")
    assert out == block(
        r"""
        | fruit | qty |
        | ----- | --: |
        | apple |   3 |
        | a\|b  |     |
        """
    )


def test_markdown_table_centre_and_short_rows():
    out = markdown.markdown_table([["x"]], ["name", "value"], align="cc")
    assert out.splitlines() == ["| name | value |", "| :--: | :---: |", "|  x   |       |"]


def test_markdown_table_wraps_long_cells():
    out = markdown.markdown_table([["a long cell that wraps", 1]], ["text", "n"], max_width=8)
    assert out.splitlines()[2].startswith("| a long<br>cell<br>that<br>wraps | 1")
    assert len(out.splitlines()) == 3
    with pytest.raises(ValueError):
        markdown.markdown_table([], [])
