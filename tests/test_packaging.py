"""The wheel ships every package and data file the code imports."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_package_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "loganalyze").rglob("__init__.py")}
    found |= {"loganalyze.grammars"} if (ROOT / "grammars" / "__init__.py").exists() else set()
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert cfg["package-dir"]["loganalyze.grammars"] == "grammars"


def test_the_command_and_python_m_start_at_the_same_entry_point():
    """``loganalyze`` and ``python -m loganalyze`` both start at ``loganalyze.console.main``
    (which imports the command line where a Ctrl-C is still one line, exit 130)."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"loganalyze": "loganalyze.console:main"}
    assert "from .console import main" in (ROOT / "loganalyze" / "__main__.py").read_text()
