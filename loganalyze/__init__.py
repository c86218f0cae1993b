"""loganalyze: ML backend logs and profiles into DuckDB, and the questions asked of them."""

__version__ = "0.1.0"
