import pytest

from textkit import fuzzy


def test_levenshtein():
    assert fuzzy.levenshtein("kitten", "sitting") == 3
    assert fuzzy.levenshtein("", "abc") == 3
    assert fuzzy.levenshtein("flaw", "lawn") == 2
    assert fuzzy.levenshtein("same", "same") == 0
    assert fuzzy.levenshtein("Case", "case") == 1


def test_levenshtein_is_cached():
    fuzzy.levenshtein.cache_clear()
    fuzzy.levenshtein("cache", "catch")
    fuzzy.levenshtein("cache", "catch")
    info = fuzzy.levenshtein.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_similarity():
    assert fuzzy.similarity("", "") == 1.0
    assert fuzzy.similarity("abcd", "abcf") == 0.75
    assert fuzzy.similarity("abc", "xyz") == 0.0


def test_best_match():
    colours = ["red", "green", "blue", "yellow"]
    assert fuzzy.best_match("gren", colours) == "green"
    assert fuzzy.best_match("BLUE", colours) == "blue"
    assert fuzzy.best_match("BLUE", colours, ignore_case=False) is None
    assert fuzzy.best_match("purple", colours) is None
    assert fuzzy.best_match("x", []) is None


@pytest.mark.parametrize(
    "a, b, expected",
    [("new york city", "City of New York", 0.75), ("a b", "b a", 1.0), ("", "", 1.0), ("red", "blue", 0.0)],
)
def test_token_similarity(a, b, expected):
    assert fuzzy.token_similarity(a, b) == expected


def test_ngram_similarity():
    assert fuzzy.ngram_similarity("night", "nacht") == pytest.approx(1 / 7)
    assert fuzzy.ngram_similarity("Hello  World", "hello world") == 1.0
    assert fuzzy.ngram_similarity("abc", "abc", n=3) == 1.0


def test_rank():
    fruits = ["apple", "apricot", "banana", "grape"]
    assert fuzzy.rank("aple", fruits, limit=2) == [("apple", 0.8), ("grape", 0.4)]
    assert fuzzy.rank("APPLE", fruits, limit=1) == [("apple", 1.0)]
    assert [c for c, _ in fuzzy.rank("grape apple", fruits, limit=None, scorer="token", cutoff=0.1)] == [
        "apple",
        "grape",
    ]
    assert fuzzy.rank("x", []) == []


@pytest.mark.parametrize("scorer", sorted(fuzzy.SCORERS))
def test_every_scorer_scores_identity_as_one(scorer):
    assert fuzzy.rank("textkit", ["textkit"], scorer=scorer) == [("textkit", 1.0)]


def test_rank_unknown_scorer():
    with pytest.raises(ValueError, match="unknown scorer 'soundex'"):
        fuzzy.rank("a", ["a"], scorer="soundex")
