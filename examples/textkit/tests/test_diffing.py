import difflib

import pytest

from textkit.diffing import jaccard, lcs, line_diff, ngrams, opcodes, ratio, word_diff


@pytest.mark.parametrize(
    "a, b, expected",
    [("ABCBDAB", "BDCABA", 4), ("abc", "abc", 3), ("abc", "xyz", 0), ("", "abc", 0)],
)
def test_lcs_length(a, b, expected):
    common = lcs(a, b)
    assert len(common) == expected
    it_a, it_b = iter(a), iter(b)
    assert all(ch in it_a for ch in common) and all(ch in it_b for ch in common)


def test_lcs_on_word_lists():
    assert lcs("the cat sat".split(), "the dog sat".split()) == ["the", "sat"]


@pytest.mark.parametrize(
    "a, b",
    [("abcd", "acbd"), ("kitten", "sitting"), ("", "new"), ("old", ""), ("same", "same"), ("abxcd", "abcyd")],
)
def test_opcodes_rebuild_b(a, b):
    codes = opcodes(a, b)
    rebuilt = ""
    for tag, i1, i2, j1, j2 in codes:
        assert tag in ("equal", "replace", "delete", "insert")
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt += b[j1:j2]
    assert rebuilt == b
    if a or b:
        assert codes[0][1] == 0 and codes[-1][2] == len(a)
    else:
        assert codes == []


def test_opcodes_merge_replace():
    assert opcodes("abc", "axc") == [("equal", 0, 1, 0, 1), ("replace", 1, 2, 1, 2), ("equal", 2, 3, 2, 3)]
    assert opcodes("ab", "abc") == [("equal", 0, 2, 0, 2), ("insert", 2, 2, 2, 3)]


@pytest.mark.parametrize("a, b", [("abcd", "bcde"), ("kitten", "sitting"), ("", ""), ("abc", "xyz")])
def test_ratio_matches_difflib(a, b):
    assert ratio(a, b) == pytest.approx(difflib.SequenceMatcher(None, a, b).ratio())


def test_jaccard_and_ngrams():
    assert jaccard("abc", "bcd") == 0.5
    assert jaccard([], []) == 1.0
    assert ngrams("abcd") == ["ab", "bc", "cd"]
    assert ngrams("abcd", 3) == ["abc", "bcd"]
    assert ngrams("a", 2) == ["a"]
    assert ngrams("") == []
    with pytest.raises(ValueError):
        ngrams("abc", 0)


def test_word_diff():
    assert word_diff("the quick brown fox", "the slow brown dog jumps") == (
        "the [-quick-] {+slow+} brown [-fox-] {+dog jumps+}"
    )
    assert word_diff("a  b", "a b") == "a b"
    assert word_diff("", "new words") == "{+new words+}"


def test_line_diff():
    assert line_diff("a\nb\nc", "a\nc\nd") == ["  a", "- b", "  c", "+ d"]
    assert line_diff("x", "y") == ["- x", "+ y"]
