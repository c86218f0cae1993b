"""Reading JSON text that may be incomplete: the one scanner of strings and brackets.

Used where a JSON document can be cut off or written one brace short (a trace-event file
that ends inside an event, MXNet's ``dumps(format='json')`` of some releases).
"""
from __future__ import annotations


def unclosed(text: str) -> tuple[str, bool]:
    """What would close every container left open in ``text`` (innermost first, e.g. ``"]}"``),
    and whether ``text`` ends inside a string.  Brackets inside strings (escapes included)
    do not count; a stray closer closes the innermost open container."""
    closers: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if closers:
                closers.pop()
    return "".join(reversed(closers)), in_str
