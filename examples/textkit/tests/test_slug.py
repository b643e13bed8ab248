from textkit import slug


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
