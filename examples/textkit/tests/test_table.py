import pytest

from textkit import table


def test_format_table_columns():
    rows = [["apple", 3, "red"], ["kiwi", None, "green"], ["fig", 12]]
    out = table.format_table(rows, headers=["fruit", "qty", "colour"])
    assert out.splitlines() == [
        "fruit | qty | colour",
        "------+-----+-------",
        "apple | 3   | red",
        "kiwi  |     | green",
        "fig   | 12  |",
    ]
    assert table.format_table([]) == ""


def test_format_table_align():
    rows = [["a", 1, "x"], ["bbbb", 100, "yyy"]]
    assert table.format_table(rows, align="rc", sep="  ").splitlines() == [
        "   a   1   x",
        "bbbb  100  yyy",
    ]
    assert table.format_table([["n"], [7]], headers=["num"], align="r") == "num\n---\n  n\n  7"
    with pytest.raises(ValueError):
        table.format_table(rows, align="lz")
