"""Reports written from one :class:`~.model.Report`: terminal table, Markdown, JSON (ours or
github-action-benchmark's), JUnit XML and self-contained HTML.  ``write(report, ...)``
writes each requested one to its file, or to standard output for ``-``."""
from __future__ import annotations

import os
import sys

from .model import Report, SideInfo

__all__ = ["Report", "SideInfo", "render", "write", "FORMATS"]

FORMATS = ("terminal", "markdown", "json", "benchmark-action", "junit", "html")


def render(report: Report, fmt: str) -> str:
    """The report in one of :data:`FORMATS`."""
    if fmt == "terminal":
        from .terminal import render as r
        return r(report)
    if fmt == "markdown":
        from .markdown import render as r
        return r(report)
    if fmt in ("json", "benchmark-action"):
        from .json import render as r
        return r(report, "benchmark-action" if fmt == "benchmark-action" else "loganalyze")
    if fmt == "junit":
        from .junit import render as r
        return r(report)
    if fmt == "html":
        from .html import render as r
        return r(report)
    raise ValueError(f"unknown report format {fmt!r}")


def write(report: Report, targets: dict[str, str]) -> None:
    """Write ``{format: path}``; ``-`` is standard output.  A file is written whole or not at
    all (a temporary file renamed into place).  Raises OSError naming the path."""
    for fmt, path in targets.items():
        text = render(report, fmt)
        if path == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
            continue
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except OSError:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
