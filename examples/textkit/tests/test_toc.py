import pytest

from textkit.toc import Heading, TableOfContents, add_anchors, build_toc

from helpers import all_distinct, block


def test_build_toc(guide):
    assert build_toc(guide) == block(
        """
        - [Getting started](#getting-started)
          - [Install](#install)
          - [Usage](#usage)
            - [Slugs](#slugs)
            - [Tables](#tables)
          - [Usage](#usage-2)
        - [API reference](#api-reference)
        """
    )


def test_max_depth_and_numbering(guide):
    assert build_toc(guide, max_depth=1, numbering="decimal") == block(
        """
        - [1. Getting started](#getting-started)
        - [2. API reference](#api-reference)
        """
    )
    roman = build_toc(guide, numbering="roman").splitlines()
    assert roman[3] == "    - [I.2.1. Slugs](#slugs)"
    assert roman[-1] == "- [II. API reference](#api-reference)"


def test_from_markdown_skips_code_fences(guide):
    toc = TableOfContents.from_markdown(guide)
    assert len(toc) == 7
    assert [h.title for h in toc][:3] == ["Getting started", "Install", "Usage"]
    assert all_distinct(h.anchor for h in toc)
    assert [h.line for h in toc] == [1, 5, 12, 14, 16, 18, 20]


@pytest.mark.parametrize(
    "line, parsed",
    [("## Title ##", (2, "Title")), ("#NoSpace", None), ("####### seven", None),
     ("   ### indented", (3, "indented")), ("    # code", None), ("# C#", (1, "C#")), ("#", None)],
)
def test_parse_heading(line, parsed):
    assert TableOfContents.parse_heading(line) == parsed


def test_plain_title():
    title = "Deep `code` *x* and **bold** [link](http://x.org)"
    assert TableOfContents.plain_title(title) == "Deep code x and bold link"


def test_max_depth_property():
    toc = TableOfContents()
    assert toc.max_depth == 3
    toc.max_depth = 6
    assert toc.max_depth == 6
    for bad in (0, 7):
        with pytest.raises(ValueError, match="max_depth"):
            toc.max_depth = bad
    with pytest.raises(ValueError, match="numbering"):
        TableOfContents(numbering="alpha")


def test_add_reserves_anchors_of_hidden_headings():
    toc = TableOfContents(max_depth=1)
    first = toc.add(1, "A")
    assert toc.add(2, "B") is None
    second = toc.add(1, "B")
    assert (first.anchor, second.anchor) == ("a", "b-2")
    assert [h.title for h in toc.roots] == ["A", "B"]
    with pytest.raises(ValueError):
        toc.add(0, "zero")


def test_nesting_and_walk():
    toc = TableOfContents()
    toc.add(2, "Starts deep")
    toc.add(1, "Top")
    toc.add(3, "Skips a level")
    toc.add(2, "Child")
    assert [h.title for h in toc.roots] == ["Starts deep", "Top"]
    top = toc.roots[1]
    assert isinstance(top, Heading)
    assert [h.title for h in top.walk()] == ["Top", "Skips a level", "Child"]
    assert top.children[1].level == 2


def test_add_anchors(guide):
    lines = add_anchors(guide).splitlines()
    assert lines[0] == "# Getting started {#getting-started}"
    assert lines[11] == "## Usage {#usage}"
    assert lines[17] == "## Usage {#usage-2}"
    assert lines[7] == "# not a heading: a shell comment"
