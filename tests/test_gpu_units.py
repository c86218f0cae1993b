"""The shared unit table and exact conversion (grammars/units.py), and the CUDA API
version-suffix rule (grammars/cuda_api.py), as every format uses them."""
from __future__ import annotations

import duckdb
import pytest

from loganalyze.grammars import ncu, nsys_stats, nvprof, torch_table
from loganalyze.grammars.cuda_api import API_VERSION_SUFFIX_RE, base_api_name, base_api_name_sql
from loganalyze.grammars.units import NS_PER_UNIT, scale_exact, to_bytes, to_ns, to_ns_float, to_ns_or_none


def test_exact_conversion():
    assert to_ns("0.1", "ms") == 100_000  # float(0.1) * 1e6 would be 100000.00000000001
    assert to_ns("1559670569089315", "us") == 1_559_670_569_089_315_000
    assert to_ns("2.5", "ns") == 2 and to_ns("3.5", "ns") == 4  # half-even
    assert to_ns("1.0240", "μs") == to_ns("1.0240", "us") == to_ns("1.024", "usecond") == 1024
    assert to_bytes("1.5", "KB") == to_bytes("1.5", "Kb") == 1536
    assert to_ns_float(1.5, "ms") == 1_500_000.0
    for bad in ("x", "nan", "inf", "1e400"):
        with pytest.raises(ValueError):
            to_ns(bad, "s")
        assert to_ns_or_none(bad, "s") is None
    with pytest.raises(ValueError, match="unknown time unit"):
        to_ns("1", "fortnight")
    with pytest.raises(ValueError, match="not a number"):
        scale_exact("1,5", 1)


def test_every_format_reads_times_through_the_table():
    assert torch_table.time_ns("12.345us") == 12_345 and torch_table.time_ns("1.5s") == 1_500_000_000
    assert nvprof.time_to_ns("264.39ms") == 264_390_000 and nvprof.time_to_ns("1.5", "μs") == 1_500
    assert nvprof.size_to_bytes("1.5000KB") == 1_536
    assert nsys_stats.number_text("88,573,480") == "88573480"
    assert ncu.number_text("2.000,50") == "2000.50" and ncu.number("2,000.00") == 2000.0
    assert set(nvprof.TIME_UNITS) <= set(NS_PER_UNIT)


def test_api_version_suffix_rule_in_python_and_sql():
    names = ["cudaMemcpy_v3020", "cuLaunchKernel_ptsz_v7000", "cuInit", "cudaFoo_v", "a_v1b"]
    want = ["cudaMemcpy", "cuLaunchKernel_ptsz", "cuInit", "cudaFoo_v", "a_v1b"]
    assert [base_api_name(n) for n in names] == want
    assert base_api_name(None) is None and API_VERSION_SUFFIX_RE.search("x_v12")
    got = duckdb.sql(f"SELECT {base_api_name_sql('n')} FROM unnest($names) t(n)", params={"names": names})
    assert [r[0] for r in got.fetchall()] == want
