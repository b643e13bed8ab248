import pytest

from minilib import count


def test_count_words():
    assert count.count_words("a b  c") == 3
    assert count.count_words("   ") == 0


@pytest.mark.parametrize("text,word", [("a bb ccc", "ccc"), ("aa b", "aa"), ("", "")])
def test_longest_word(text, word):
    assert count.longest_word(text) == word


def test_word_counter():
    c = count.WordCounter()
    c.add("the cat")
    c.add("The dog")
    assert c.most_common() == [("the", 2)]
