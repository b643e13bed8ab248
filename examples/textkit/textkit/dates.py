"""Durations and dates for people: "2 hours, 5 minutes", "3 days ago", "yesterday"."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from textkit.humanize import ordinal, plural

_UNITS = [
    ("year", 365 * 86400), ("week", 7 * 86400), ("day", 86400),
    ("hour", 3600), ("minute", 60), ("second", 1),
]
_PARSE_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([wdhms])", re.IGNORECASE)
_MONTHS = (
    "January February March April May June July August September October November December"
).split()


def _seconds(value: float | timedelta) -> float:
    """Seconds in *value*, a number of seconds or a timedelta."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def format_duration(value: float | timedelta, precision: int = 2) -> str:
    """Write a duration with its *precision* largest non-zero units.

    ``format_duration(5400)`` is "1 hour, 30 minutes"; seconds are rounded
    down; durations under one second are "0 seconds". Years count 365 days.
    """
    if precision < 1:
        raise ValueError("precision must be at least 1")
    remaining = int(abs(_seconds(value)))
    parts: list[str] = []
    for name, size in _UNITS:
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(plural(count, name))
    if not parts:
        return "0 seconds"
    return ", ".join(parts[:precision])


def parse_duration(text: str) -> timedelta:
    """Read a duration such as "1h30m", "2d 4h", "90s" or "1.5h".

    Units: w(eeks), d(ays), h(ours), m(inutes), s(econds), in any order and
    case. Anything else in *text* raises ValueError.
    """
    stripped = text.strip()
    total = 0.0
    end = 0
    for match in _DURATION_PART.finditer(stripped):
        if stripped[end:match.start()].strip():
            break
        total += float(match.group(1)) * _PARSE_UNITS[match.group(2).lower()]
        end = match.end()
    if not stripped or stripped[end:].strip():
        raise ValueError(f"invalid duration {text!r}")
    return timedelta(seconds=total)


def natural_delta(delta: float | timedelta) -> str:
    """Say how far away a moment is: "in 3 days", "5 minutes ago", "just now".

    Positive values are in the future. Only the largest unit is kept, so
    "2 hours ago" covers 2 hours 59 minutes. Under 10 seconds is "just now".
    """
    seconds = _seconds(delta)
    if abs(seconds) < 10:
        return "just now"
    text = format_duration(seconds, precision=1)
    return f"in {text}" if seconds > 0 else f"{text} ago"


def format_date(day: date) -> str:
    """Write a date as "3rd March 2025", independent of the locale."""
    return f"{ordinal(day.day)} {_MONTHS[day.month - 1]} {day.year}"


def natural_day(day: date | datetime, today: date | None = None) -> str:
    """Write *day* as "today", "yesterday" or "tomorrow", or else with format_date.

    *today* defaults to the current local date.
    """
    if isinstance(day, datetime):
        day = day.date()
    if today is None:
        today = date.today()
    names = {0: "today", -1: "yesterday", 1: "tomorrow"}
    return names.get((day - today).days) or format_date(day)
