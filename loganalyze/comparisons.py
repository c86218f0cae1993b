"""Comparisons of runs, as methods of :class:`loganalyze.Database` (a mixin: the database
supplies ``_store``, ``con`` and ``read_only``).  The work is done by ``loganalyze.compare``;
the ``compare``, ``check`` and ``trend`` commands call the same functions."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from .errors import LoganalyzeError

if TYPE_CHECKING:  # pragma: no cover
    import pandas


class Comparisons:
    """``report``, ``compare``, ``check`` and ``trend`` of :class:`loganalyze.Database`."""

    def report(self, baseline: str, candidate: str, by: str | Sequence[str] | None = "kind",
               family: str | None = None, statistic: str = "mean", check: bool = False, policy: Any = None,
               record: bool = False, **policy_fields: Any):
        """The comparison report (:class:`loganalyze.compare.reports.Report`) of two sides, as the
        ``compare`` command makes it, or as ``check`` makes it with ``check=True`` (the default
        policy), a ``policy`` (a TOML file path or a :class:`~loganalyze.compare.policy.PolicySet`)
        or policy fields (``fail_pct``, ``warn_pct``, ``min_delta_us``, ``min_count``, ``alpha``).

        A side is a run label of this database, a database file, log files (comma-separated,
        globs, directories; ingested into a temporary database) or ``@last-good`` /
        ``@previous`` / ``@latest``.  ``report.table`` is the item table, ``report.verdict``
        (checks) pass, warn or fail, ``report.exit_code`` the command's exit code;
        ``loganalyze.compare.reports.write(report, {"markdown": path, ...})`` writes reports."""
        # the comparison reads samples through the duckdb package's relational API (con.sql),
        # which a read-only database's connection gets only once the package is imported
        import duckdb  # noqa: F401

        from .compare.policy import PolicyError, PolicySet, load_policy
        from .compare.run import CompareError, build_report

        checking = check or policy is not None or bool(policy_fields)
        try:
            if checking and not isinstance(policy, PolicySet):
                policy = load_policy(os.fspath(policy) if policy is not None else None,
                                     statistic=statistic, **policy_fields)
            return build_report("check" if checking else "compare", baseline, candidate, store=self._store,
                                by=by, family=family, statistic=policy.base.statistic if checking else statistic,
                                policy=policy if checking else None, record=record and not self.read_only)
        except (CompareError, PolicyError) as exc:
            raise LoganalyzeError(str(exc)) from None

    def compare(self, baseline: str, candidate: str, by: str | Sequence[str] | None = "kind",
                family: str | None = None, statistic: str = "mean") -> "pandas.DataFrame":
        """Item by item (oneDNN primitives by ``by``, GPU kernels, operators, NVTX ranges):
        baseline and candidate count, total, per-call mean and median, absolute and relative
        change, new and vanished items.  Sides as in :meth:`report`."""
        return self.report(baseline, candidate, by=by, family=family, statistic=statistic).table

    def check(self, baseline: str, candidate: str, by: str | Sequence[str] | None = "kind",
              family: str | None = None, policy: Any = None, record: bool = False,
              **policy_fields: Any) -> "pandas.DataFrame":
        """:meth:`compare` plus a verdict per item (pass, warn, fail, improved, ...) under the
        policy (defaults: fail at +10%, warn at +5% per call, noise floor, significance test);
        the overall verdict is ``df.attrs["verdict"]`` and the exit code the command would give
        ``df.attrs["exit_code"]``."""
        report = self.report(baseline, candidate, by=by, family=family, check=True, policy=policy, record=record,
                             **policy_fields)
        table = report.table
        table.attrs["verdict"] = report.verdict
        table.attrs["exit_code"] = report.exit_code
        return table

    def trend(self, by: str | Sequence[str] | None = "kind", family: str | None = None, last: int | None = None,
              threshold_pct: float = 10.0, statistic: str = "mean") -> "pandas.DataFrame":
        """Per-call time of every item in each run, oldest first, with a ``drift`` flag on items
        that changed by more than ``threshold_pct`` over the window in steps that each stayed
        under it."""
        from .compare.samples import SampleError
        from .compare.trend import trend

        try:
            return trend(self.con, by, family, last=last, threshold_pct=threshold_pct, statistic=statistic)
        except SampleError as exc:
            raise LoganalyzeError(str(exc)) from None
