"""The error every API call raises for a problem worth one line to the user."""
from __future__ import annotations


class LoganalyzeError(Exception):
    """A problem worth one line to the user: bad arguments, no such run or source, no data."""
