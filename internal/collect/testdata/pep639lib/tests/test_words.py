from pep639lib.words import initials, title


def test_initials():
    assert initials("portable network graphics") == "PNG"


def test_initials_empty():
    assert initials("   ") == ""


def test_title():
    assert title("the  quick fox") == "The Quick Fox"
