from indexlib import longest, word_count, word_lengths


def test_word_count():
    assert word_count("one two_three fourFive") == 5
    assert word_count("") == 0


def test_word_lengths():
    assert word_lengths("Tiny Words") == {"tiny": 4, "words": 5}


def test_longest():
    assert longest("a bb ccc dd") == "ccc"
    assert longest("") == ""


def test_runs_on_the_index_pytest():
    import pytest

    assert int(pytest.__version__.split(".")[0]) >= 8
