import pytest

from textkit.humanize import filesize, intcomma, number_to_words, ordinal, plural, pluralize


@pytest.mark.parametrize("n, expected", [(1, "1st"), (22, "22nd"), (103, "103rd")])
def test_ordinal(n, expected):
    assert ordinal(n) == expected


def test_ordinal_teens_zero_and_negatives():
    assert [ordinal(n) for n in (11, 12, 13, 14, 111)] == ["11th", "12th", "13th", "14th", "111th"]
    assert ordinal(0) == "0th"
    assert ordinal(-1) == "-1st"
    with pytest.raises(TypeError):
        ordinal(1.5)
    with pytest.raises(TypeError):
        ordinal(True)


@pytest.mark.parametrize(
    "pairs",
    [
        [("file", "files"), ("day", "days"), ("box", "boxes"), ("church", "churches"), ("city", "cities")],
        [("child", "children"), ("leaf", "leaves"), ("mouse", "mice"), ("hero", "heroes")],
        [("sheep", "sheep"), ("series", "series"), ("", "")],
        [("Person", "People"), ("BUS", "BUSES"), ("City", "Cities")],
    ],
    ids=["regular", "irregular", "unchanged", "capitalised"],
)
def test_pluralize(pairs):
    assert [pluralize(word) for word, _ in pairs] == [expected for _, expected in pairs]


def test_plural_counts():
    assert plural(1, "file") == "1 file"
    assert plural(0, "file") == "0 files"
    assert plural(-1, "degree") == "-1 degree"
    assert plural(1200, "box") == "1,200 boxes"
    assert plural(2, "person", "persons") == "2 persons"


def test_intcomma():
    assert intcomma(1234567) == "1,234,567"
    assert intcomma(999) == "999"
    assert intcomma(-12345) == "-12,345"
    assert intcomma(1234.5) == "1,234.5"
    assert intcomma(1234567, sep=".") == "1.234.567"
    with pytest.raises(TypeError):
        intcomma("1234")


@pytest.mark.parametrize(
    "size, binary, expected",
    [(1500, False, "1.5 kB"), (1024, True, "1.0 KiB"), (5 * 1024**3, True, "5.0 GiB")],
)
def test_filesize(size, binary, expected):
    assert filesize(size, binary=binary) == expected


def test_filesize_unit_boundaries():
    assert filesize(0) == "0 bytes"
    assert filesize(1) == "1 byte"
    assert filesize(999) == "999 bytes"
    assert filesize(1000) == "1.0 kB"
    assert filesize(999_999) == "1.0 MB"
    assert filesize(1023, binary=True) == "1023 bytes"
    assert filesize(3 * 10**18) == "3000.0 PB"


def test_filesize_parts_and_errors():
    assert filesize(1536, binary=True, parts=True) == (1.5, "KiB")
    assert filesize(7, parts=True) == (7.0, "bytes")
    with pytest.raises(ValueError):
        filesize(-1)


@pytest.mark.parametrize(
    "n, words",
    [(42, "forty-two"), (1234, "one thousand two hundred thirty-four"), (2_000_019, "two million nineteen")],
)
def test_number_to_words(n, words):
    assert number_to_words(n) == words


def test_number_to_words_limits():
    assert [number_to_words(n) for n in (0, 7, 15, 40, 100)] == ["zero", "seven", "fifteen", "forty", "one hundred"]
    assert number_to_words(-5) == "minus five"
    assert number_to_words(10**15 - 1).startswith("nine hundred ninety-nine trillion")
    with pytest.raises(ValueError):
        number_to_words(10**15)
    with pytest.raises(TypeError):
        number_to_words("12")
