import dataclasses

import pytest

from textkit.stats import (
    STOPWORDS,
    TextStats,
    count_syllables,
    reading_time,
    summarize,
    top_words,
    word_frequencies,
)


@pytest.mark.parametrize(
    "word, syllables",
    [("make", 1), ("table", 2), ("garden", 2), ("the", 1), ("beautiful", 3), ("rhythm", 1),
     ("see", 1), ("queue", 1), ("", 0)],
)
def test_count_syllables(word, syllables):
    assert count_syllables(word) == syllables


def test_text_stats_counts():
    stats = TextStats.from_text("The cat sat. The dog ran!")
    assert stats == TextStats(characters=25, letters=18, words=6, sentences=2, paragraphs=1, syllables=6)
    assert stats.average_word_length == 3.0
    assert stats.words_per_sentence == 3.0
    assert stats.reading_ease == 119.2


def test_text_stats_of_article(article):
    stats = TextStats.from_text(article)
    assert (stats.words, stats.sentences, stats.paragraphs) == (42, 7, 3)
    assert stats.words_per_sentence == 6.0
    assert 60 < stats.reading_ease < 100


def test_text_stats_empty_and_frozen():
    stats = TextStats.from_text("")
    assert stats.words == stats.sentences == stats.paragraphs == 0
    assert (stats.average_word_length, stats.words_per_sentence, stats.reading_ease) == (0.0, 0.0, 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.words = 3


def test_reading_time():
    stats = TextStats.from_text("The cat sat. The dog ran!")
    assert stats.reading_time() == "1 second"
    assert stats.reading_time(words_per_minute=1) == "6 minutes"
    with pytest.raises(ValueError):
        stats.reading_time(0)


def test_reading_time_function(article):
    assert reading_time(article) == "12 seconds"
    assert reading_time(article, words_per_minute=10) == "4 minutes, 12 seconds"


def test_word_frequencies():
    assert word_frequencies("The the THE cat") == {"the": 3, "cat": 1}
    assert word_frequencies("The the THE cat", ignore_case=False) == {"The": 1, "the": 1, "THE": 1, "cat": 1}
    assert word_frequencies("The the THE cat", stopwords=["the"]) == {"cat": 1}


def test_top_words(article):
    assert top_words(article, 3) == [("light", 3), ("soil", 3), ("garden", 2)]
    assert top_words("the a of", 5) == []
    assert all(word not in STOPWORDS for word, _ in top_words(article, 20))


def test_summarize(article):
    assert summarize(article, 2) == "A small garden needs water, light and good soil. Is the soil ready?"
    assert summarize("One sentence only.", 3) == "One sentence only."
    assert summarize("", 1) == ""
