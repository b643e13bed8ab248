"""A fixture whose documentation test is parametrized over the package's public names."""

from paramlib.ops import add, mul
from paramlib.text import shout, whisper

__all__ = ["add", "mul", "shout", "whisper"]
