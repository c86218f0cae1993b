"""The query layer's errors (a module of their own: every query module raises them)."""
from __future__ import annotations


class QueryError(Exception):
    """A question the database cannot answer as asked, worth one line to the user."""


class NoData(QueryError):
    """The question is fine, but the chosen files hold nothing to answer it with."""
