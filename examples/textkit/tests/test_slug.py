import pytest

from textkit import slug
from textkit.slug import slugify_identifier, unique_slug

from helpers import all_distinct


def test_slugify():
    assert slug.slugify("Hello, World!") == "hello-world"
    assert slug.slugify("  Crème brûlée  ") == "creme-brulee"
    assert slug.slugify("a_b c", sep="_") == "a_b_c"
    assert slug.slugify("The quick brown fox", max_length=12) == "the-quick"


def test_unique_slug_free():
    taken = {"other"}
    assert slug.unique_slug("New Report", taken) == "new-report"
    assert taken == {"other", "new-report"}
    assert slug.unique_slug("!!!", set()) == "item"


def test_unique_slug_counts_up():
    taken = {"report", "report-2"}
    assert slug.unique_slug("Report", taken) == "report-3"
    assert slug.unique_slug("Report", taken) == "report-4"
    assert slug.unique_slug("a b", {"a_b"}, sep="_") == "a_b_2"


@pytest.mark.parametrize(
    "text, expected",
    [("Ünïcödé", "unicode"), ("2024: a year", "2024-a-year"), ("---", ""), ("日本語 text", "text"), ("ﬁle", "file")],
)
def test_slugify_edge_cases(text, expected):
    assert slug.slugify(text) == expected


def test_slugify_max_length_cuts_at_separator():
    assert slug.slugify("one two three", max_length=7) == "one-two"
    assert slug.slugify("one two three", max_length=5) == "one"
    assert slug.slugify("abcdefgh", max_length=4) == "abcd"
    assert slug.slugify("short", max_length=50) == "short"


def test_unique_slug_many_titles():
    taken: set[str] = set()
    slugs = [unique_slug(title, taken) for title in ["Intro", "intro", "INTRO!", "Intro 2", "?"]]
    assert slugs == ["intro", "intro-2", "intro-3", "intro-2-2", "item"]
    assert all_distinct(slugs)


@pytest.mark.parametrize(
    "name, expected",
    [("parseHTTPResponse", "parse-http-response"), ("snake_case", "snake-case"), ("Page2Title", "page-2-title")],
)
def test_slugify_identifier(name, expected):
    assert slugify_identifier(name) == expected
    assert slugify_identifier(name, sep="_") == expected.replace("-", "_")
