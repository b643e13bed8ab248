from datetime import date, datetime, timedelta

import pytest

from textkit import dates


@pytest.mark.parametrize(
    "seconds, expected",
    [(0.7, "0 seconds"), (5400, "1 hour, 30 minutes"), (90061, "1 day, 1 hour"), (400 * 86400, "1 year, 5 weeks")],
)
def test_format_duration(seconds, expected):
    assert dates.format_duration(seconds) == expected


def test_format_duration_units():
    assert dates.format_duration(0) == "0 seconds"
    assert dates.format_duration(1) == "1 second"
    assert dates.format_duration(59) == "59 seconds"
    assert dates.format_duration(60) == "1 minute"
    assert dates.format_duration(8 * 86400) == "1 week, 1 day"


def test_format_duration_precision_and_timedelta():
    delta = timedelta(days=1, hours=1, minutes=1, seconds=1)
    assert dates.format_duration(delta) == "1 day, 1 hour"
    assert dates.format_duration(delta, precision=4) == "1 day, 1 hour, 1 minute, 1 second"
    assert dates.format_duration(-3600) == "1 hour"
    with pytest.raises(ValueError):
        dates.format_duration(10, precision=0)


@pytest.mark.parametrize(
    "text, seconds",
    [("1h30m", 5400), ("2d 4h", 187200), ("1.5h", 5400)],
)
def test_parse_duration(text, seconds):
    assert dates.parse_duration(text) == timedelta(seconds=seconds)


def test_parse_duration_units_and_spacing():
    assert dates.parse_duration("90s") == timedelta(seconds=90)
    assert dates.parse_duration("1W") == timedelta(weeks=1)
    assert dates.parse_duration(" 10m ") == timedelta(minutes=10)
    assert dates.parse_duration("1h 2m 3s") == timedelta(hours=1, minutes=2, seconds=3)


@pytest.mark.parametrize("bad", ["", "10", "1h and 2m"])
def test_parse_duration_rejects(bad):
    with pytest.raises(ValueError, match="invalid duration"):
        dates.parse_duration(bad)
    for other in ("1x", "h1", "1h 2m extra"):
        with pytest.raises(ValueError):
            dates.parse_duration(other)


def test_parse_and_format_round_trip():
    for text in ("1 hour, 30 minutes", "2 days, 4 hours", "45 seconds"):
        compact = text.replace(" hours", "h").replace(" hour", "h").replace(" minutes", "m")
        compact = compact.replace(" days", "d").replace(" seconds", "s").replace(",", "")
        assert dates.format_duration(dates.parse_duration(compact)) == text


def test_natural_delta():
    assert dates.natural_delta(5) == "just now"
    assert dates.natural_delta(-180) == "3 minutes ago"
    assert dates.natural_delta(timedelta(days=3, hours=5)) == "in 3 days"
    assert dates.natural_delta(-(2 * 3600 + 59 * 60)) == "2 hours ago"


def test_natural_day():
    today = date(2025, 3, 4)
    assert dates.natural_day(date(2025, 3, 4), today) == "today"
    assert dates.natural_day(date(2025, 3, 3), today) == "yesterday"
    assert dates.natural_day(datetime(2025, 3, 5, 23, 59), today) == "tomorrow"
    assert dates.natural_day(date(2025, 3, 1), today) == "1st March 2025"
    assert dates.natural_day(date.today()) == "today"


def test_format_date():
    assert dates.format_date(date(2024, 12, 22)) == "22nd December 2024"
    assert dates.format_date(date(1999, 1, 13)) == "13th January 1999"
