"""Units the profilers print, and the one exact way to turn a number in them into an integer.

Every time unit any format writes maps to its size in nanoseconds in :data:`NS_PER_UNIT`;
every size unit to bytes in :data:`BYTES_PER_UNIT` (1024-based, as nvprof and PyTorch print
them).  Which spellings a format accepts stays in that format's grammar; the factors live
here only.

:func:`scale_exact` is the conversion: the number's *text* (or a ``Decimal``) times an
integer factor, exactly, rounded half-even to an integer -- never through a float, so
``0.1`` ms is 100000 ns and a 16-digit microsecond timestamp keeps every nanosecond.
:func:`to_ns` and :func:`to_bytes` apply it to a unit; :func:`to_ns_float` is the float
form for values that are floats already (statistics, metric values).
"""
from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

#: nanoseconds per time unit, every spelling a supported format prints
NS_PER_UNIT: dict[str, int] = {
    "ns": 1, "nsecond": 1,
    "us": 1_000, "μs": 1_000, "usecond": 1_000,
    "ms": 1_000_000, "msecond": 1_000_000,
    "s": 1_000_000_000, "second": 1_000_000_000,
}
#: the short time spellings (nvprof, nsys stats); Nsight Compute writes the long ones
SHORT_TIME_UNITS: tuple[str, ...] = ("ns", "us", "μs", "ms", "s")

#: bytes per size unit (1024-based); PyTorch tables write ``Kb``/``Mb`` for the same units
BYTES_PER_UNIT: dict[str, int] = {
    "b": 1, "B": 1, "Kb": 1024, "KB": 1024, "Mb": 1024 ** 2, "MB": 1024 ** 2,
    "Gb": 1024 ** 3, "GB": 1024 ** 3, "Tb": 1024 ** 4, "TB": 1024 ** 4,
}


#: the range of the BIGINT columns the results go to
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def scale_exact(number: str | int | Decimal, factor: int) -> int:
    """``number`` (decimal text, int or Decimal) times ``factor``, exactly, rounded half-even.

    Raises ValueError (``not a number: '...'``) for text that is no finite decimal number,
    and (``out of range: '...'``) for a result that does not fit a signed 64-bit integer."""
    try:
        d = number if isinstance(number, Decimal) else Decimal(str(number).strip())
    except (InvalidOperation, ValueError):
        raise ValueError(f"not a number: {number!r}") from None
    if not d.is_finite():
        raise ValueError(f"not a number: {number!r}")
    try:
        out = int((d * factor).to_integral_value(ROUND_HALF_EVEN))
    except ArithmeticError:  # decimal.Overflow: an exponent past the context's
        out = INT64_MAX + 1
    if not INT64_MIN <= out <= INT64_MAX:
        raise ValueError(f"out of range: {number!r}")
    return out


def to_ns(number: str | int | Decimal, unit: str) -> int:
    """``number`` ``unit`` in integer nanoseconds, exactly: ``to_ns("1.5", "us")`` -> 1500.

    Raises ValueError for an unknown unit or a number that is not one."""
    factor = NS_PER_UNIT.get(unit)
    if factor is None:
        raise ValueError(f"unknown time unit {unit!r}")
    return scale_exact(number, factor)


def to_ns_or_none(number: str | int | Decimal | None, unit: str) -> int | None:
    """:func:`to_ns`, or None where ``number`` is None, not a finite number, or the unit unknown."""
    if number is None:
        return None
    try:
        return to_ns(number, unit)
    except ValueError:
        return None


def to_bytes(number: str | int | Decimal, unit: str) -> int:
    """``number`` ``unit`` in bytes, exactly: ``to_bytes("1.5", "KB")`` -> 1536."""
    factor = BYTES_PER_UNIT.get(unit)
    if factor is None:
        raise ValueError(f"unknown size unit {unit!r}")
    return scale_exact(number, factor)


def to_ns_float(value: float, unit: str) -> float:
    """A float ``value`` in ``unit`` as float nanoseconds (for averages and metric values)."""
    factor = NS_PER_UNIT.get(unit)
    if factor is None:
        raise ValueError(f"unknown time unit {unit!r}")
    return value * factor
