"""Small helpers on words, built on wordcase's word splitting."""

from indexlib.cases import camel, kebab, snake, title
from indexlib.stats import longest, word_count, word_lengths

__all__ = ["camel", "kebab", "snake", "title", "longest", "word_count", "word_lengths"]
