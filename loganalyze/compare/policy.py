"""When is an item a regression: thresholds, noise floor, minimum count, significance, and
per-item overrides from a TOML file.

A policy file (``--policy loganalyze.toml``)::

    [check]
    statistic = "mean"       # per-call statistic compared: mean (default) or median
    fail = "10%"             # slower by at least this: regression (exit 1)
    warn = "5%"              # slower by at least this: warning
    min_delta_us = 0.05      # absolute noise floor on the per-call statistic, in µs
    min_count = 1            # fewer calls than this on either side: never flagged
    alpha = 0.05             # significance level of the signed-rank test over paired calls
    test_min_samples = 8     # the test runs when this many calls pair up

    [[check.override]]
    match = "onednn:reorder"     # family:item, shell wildcards (* ? [..]); later overrides win
    fail = "25%"

    [[check.override]]
    match = "op:ProfilerStep#*"
    ignore = true

Precedence: built-in defaults, then the file's ``[check]`` table, then command-line options,
then the overrides matching an item.
"""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field, fields, replace
from fnmatch import fnmatchcase
from typing import Any

STATISTICS = ("mean", "median")


class PolicyError(ValueError):
    """A bad policy file or option; worth one line to the user."""


@dataclass(frozen=True)
class Policy:
    """Thresholds for one item (or the defaults for all)."""

    statistic: str = "mean"
    fail_pct: float = 10.0
    warn_pct: float = 5.0
    min_delta_us: float = 0.05
    min_count: int = 1
    alpha: float = 0.05
    test_min_samples: int = 8
    ignore: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The settings, for reports."""
        return asdict(self)


@dataclass(frozen=True)
class Override:
    """Settings for the items whose ``family:item`` matches ``match``."""

    match: str
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicySet:
    """The global policy and the per-item overrides."""

    base: Policy = Policy()
    overrides: tuple[Override, ...] = ()

    def for_item(self, family: str, item: str) -> Policy:
        """The policy of one item: the base with every matching override applied in order."""
        name = f"{family}:{item}"
        policy = self.base
        for ov in self.overrides:
            if fnmatchcase(name, ov.match):
                policy = replace(policy, **ov.settings)
        return policy

    def as_dict(self) -> dict[str, Any]:
        """The settings and overrides, for reports."""
        return {**self.base.as_dict(), "overrides": [{"match": o.match, **o.settings} for o in self.overrides]}


def parse_percent(value: Any, name: str) -> float:
    """``"10%"``, ``"10"`` or ``10`` -> ``10.0`` (percent); raises :class:`PolicyError`."""
    text = str(value).strip()
    try:
        number = float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        raise PolicyError(f"{name} {value!r}: expected a percentage such as 10%") from None
    if not number >= 0 or number == float("inf"):
        raise PolicyError(f"{name} {value!r}: expected a percentage of 0 or more")
    return number


#: file and option names -> Policy field
_KEYS = {"statistic": "statistic", "fail": "fail_pct", "warn": "warn_pct", "min_delta_us": "min_delta_us",
         "min_count": "min_count", "alpha": "alpha", "test_min_samples": "test_min_samples", "ignore": "ignore"}


def _settings(table: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise PolicyError(f"{where}: unknown setting {key!r}; choose from {', '.join(_KEYS)}")
        out[_KEYS[key]] = _value(_KEYS[key], value, f"{where}: {key}")
    return out


def _value(attr: str, value: Any, where: str) -> Any:
    try:
        if attr in ("fail_pct", "warn_pct"):
            return parse_percent(value, where)
        if attr == "statistic":
            if value not in STATISTICS:
                raise PolicyError(f"{where} {value!r}: choose from {', '.join(STATISTICS)}")
            return value
        if attr == "ignore":
            if not isinstance(value, bool):
                raise PolicyError(f"{where} {value!r}: expected true or false")
            return value
        if attr in ("min_count", "test_min_samples"):
            if isinstance(value, bool):
                raise ValueError
            number = int(value)
            if number < 0 or (isinstance(value, float) and number != value):
                raise ValueError
            return number
        number = float(value)
        if not number >= 0 or (attr == "alpha" and number > 1):
            raise ValueError
        return number
    except PolicyError:
        raise
    except (TypeError, ValueError):
        raise PolicyError(f"{where} {value!r}: expected a number of 0 or more") from None


def _toml_loads(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"not valid TOML: {exc}") from None


def load_policy(path: str | None = None, **options: Any) -> PolicySet:
    """The policy from ``path`` (a TOML file, optional) with ``options`` (Policy field names,
    None meaning "not given") on top.  Raises :class:`PolicyError` naming the file."""
    base: dict[str, Any] = {}
    overrides: list[Override] = []
    if path is not None:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise PolicyError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            doc = _toml_loads(text)
        except PolicyError as exc:
            raise PolicyError(f"{path}: {exc}") from None
        check = doc.get("check", {})
        if not isinstance(check, dict):
            raise PolicyError(f"{path}: [check] must be a table")
        items = check.get("override", [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise PolicyError(f"{path}: [[check.override]] must be an array of tables")
        base = _settings({k: v for k, v in check.items() if k != "override"}, f"{path}: [check]")
        for n, table in enumerate(items, 1):
            match = table.get("match")
            if not isinstance(match, str) or not match:
                raise PolicyError(f"{path}: override {n} needs match = \"family:item\"")
            settings = _settings({k: v for k, v in table.items() if k != "match"}, f"{path}: override {match!r}")
            if "statistic" in settings:
                raise PolicyError(f"{path}: override {match!r}: statistic can only be set in [check]")
            overrides.append(Override(match, settings))
    names = {f.name for f in fields(Policy)}
    for attr, value in options.items():
        if attr not in names:
            raise TypeError(f"unknown policy option {attr}")
        if value is not None:
            base[attr] = _value(attr, value, f"--{attr.replace('_pct', '').replace('_', '-')}")
    policy = Policy(**base)
    if policy.warn_pct > policy.fail_pct:
        raise PolicyError(f"--warn {policy.warn_pct:g}% is above --fail {policy.fail_pct:g}%")
    return PolicySet(policy, tuple(overrides))
