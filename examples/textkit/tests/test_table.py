import pytest

from textkit import table
from textkit.table import column_widths, format_records, normalize_rows

from helpers import block, widths


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


def test_normalize_rows():
    assert normalize_rows([[1, None], [2]], headers=["a", "b", "c"]) == [
        ["a", "b", "c"],
        ["1", "", ""],
        ["2", "", ""],
    ]
    assert normalize_rows([]) == []


def test_column_widths_count_wide_characters():
    assert column_widths([["ab", "漢字"], ["abc", "x"]]) == [3, 4]
    assert column_widths([]) == []


def test_format_table_wide_characters_line_up():
    out = table.format_table([["漢字", 1], ["ab", 22]], headers=["word", "n"])
    assert out == block(
        """
        word | n
        -----+---
        漢字 | 1
        ab   | 22
        """
    )


@pytest.mark.parametrize("sep, rule", [(" | ", "-+-"), ("|", "+"), ("  ", "--"), (" ", "-")])
def test_rule_follows_separator(sep, rule):
    out = table.format_table([["a", "b"]], headers=["x", "y"], sep=sep)
    assert out.splitlines()[1] == f"-{rule}-"


def test_format_records():
    records = [{"name": "ada", "born": 1815}, {"name": "alan", "field": "logic"}]
    assert format_records(records) == block(
        """
        name | born | field
        -----+------+------
        ada  | 1815 |
        alan |      | logic
        """
    )
    out = format_records(records, columns=["born", "name"], align="rr")
    assert widths(out) == [11, 11, 11, 11]
    assert out.splitlines()[2] == "1815 |  ada"
