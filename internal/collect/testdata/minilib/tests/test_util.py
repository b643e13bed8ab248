from minilib._util import clean


def test_clean():
    assert clean(" a  b ") == "a b"


def test_clean_empty():
    assert clean("") == ""
