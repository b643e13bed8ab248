"""A test that sleeps past pytest-timeout's --timeout=1."""
import time


def test_before():
    pass


def test_sleeps():
    time.sleep(5)


def test_after():
    pass
