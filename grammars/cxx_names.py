"""C++ function names as profilers print them, and their short form.

A demangled kernel name carries a return type, namespaces, template arguments and a
parameter list: ``void at::native::(anonymous namespace)::reduce_kernel<512, 1>(...)``.
Its *short name* (what Nsight Systems stores as ``shortName``) is the function's own name:
``reduce_kernel``.  An operator function keeps its whole name (``operator()``,
``operator<``): the characters after ``operator`` are the name, not a parameter list.
This is the one short-name rule; GPU profiles and trace files both use it.
"""
from __future__ import annotations

from functools import lru_cache

_OPEN = {"(": ")", "<": ">", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
#: qualifiers that may follow a member function's parameter list
_TRAILING_QUALIFIERS = (" const", " volatile", " &", " &&")


def _strip_trailing_group(s: str, close: str) -> str | None:
    """``s`` without its last balanced ``(...)``/``<...>`` group (which ends ``s``)."""
    if not s.endswith(close):
        return None
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        ch = s[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            depth -= 1
            if depth == 0:
                return s[:i] if ch == _CLOSE[close] else None
    return None


def _top_level_split(s: str, sep: str) -> list[str]:
    """``s`` split at each ``sep`` outside every bracket pair."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        ch = s[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        if depth == 0 and s.startswith(sep, i):
            parts.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


@lru_cache(maxsize=65536)
def short_name(name: str | None) -> str | None:
    """The function name without return type, namespaces, template arguments and parameters,
    as Nsight Systems' ``shortName``: ``void ns::foo<int>(float*)`` -> ``foo``.  Names that
    are no C++ signature (``[CUDA memcpy HtoD]``, ``volta_sgemm_128x32_nn``) stay as they are."""
    if not name:
        return name
    s = name.strip()
    if s.startswith("[") or "(" not in s and "<" not in s and "::" not in s and " " not in s:
        return s
    for suffix in _TRAILING_QUALIFIERS:
        if s.endswith(suffix):
            s = s[: -len(suffix)]
    t = _strip_trailing_group(s, ")")
    if t is not None:
        s = t.rstrip()
    while s.endswith(">"):
        t = _strip_trailing_group(s, ">")
        if t is None:
            break
        s = t.rstrip()
    words = _top_level_split(s, " ")
    s = words[-1] if words and words[-1] else s
    parts = _top_level_split(s, "::")
    out = parts[-1] if parts and parts[-1] else s
    return out or name
