from textkit import fuzzy


def test_levenshtein():
    assert fuzzy.levenshtein("kitten", "sitting") == 3
    assert fuzzy.levenshtein("", "abc") == 3
    assert fuzzy.levenshtein("flaw", "lawn") == 2
    assert fuzzy.levenshtein("same", "same") == 0
    assert fuzzy.levenshtein("Case", "case") == 1


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
