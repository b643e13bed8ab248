from paramlib import shout, whisper


def test_shout():
    assert shout("hi") == "HI!"


def test_shout_empty():
    assert shout("") == "!"


def test_whisper():
    assert whisper("HI") == "hi..."


def test_whisper_mixed():
    assert whisper("Hello There") == "hello there..."
