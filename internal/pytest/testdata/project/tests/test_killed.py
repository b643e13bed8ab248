"""A run killed from outside while test_hangs sleeps."""
import time


def test_first():
    pass


def test_second_fails():
    assert 1 == 2


def test_hangs():
    time.sleep(120)


def test_never_reached():
    pass
