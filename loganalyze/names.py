"""Kernel names in their three forms: as demangled, short and mangled.

Profilers store a kernel name mangled (``_Z11gemm_kernelIfLi128EEvPKfS1_Pfiii``, nvprof),
demangled (``void gemm_kernel<float, 128>(float const*, ...)``, most tools) or both.
:func:`name_forms` gives all three from either; demangling uses ``cxxfilt`` (a ctypes
wrapper of libstdc++'s ``abi::__cxa_demangle``), the short form the one rule of
:func:`loganalyze.grammars.cxx_names.short_name`.  Importers and queries both use this
module; it imports neither.
"""
from __future__ import annotations

from functools import lru_cache

from .grammars.cxx_names import short_name

__all__ = ["demangle", "name_forms", "short_name"]


@lru_cache(maxsize=1)
def _demangler():
    try:
        import cxxfilt  # ctypes wrapper of libstdc++'s abi::__cxa_demangle

        cxxfilt.demangle("_Z1fv")
        return cxxfilt
    except Exception:  # library or libstdc++ missing: names stay as stored
        return None


@lru_cache(maxsize=65536)
def demangle(name: str | None) -> str | None:
    """The demangled form of an Itanium C++ name (``_Z...``); other names unchanged."""
    if not name or not name.startswith("_Z"):
        return name
    d = _demangler()
    if d is None:
        return name
    try:
        return d.demangle(name)
    except Exception:
        return name


@lru_cache(maxsize=65536)
def name_forms(name: str | None) -> tuple[str | None, str | None, str | None]:
    """(demangled, short, mangled) of a kernel name as a tool printed or stored it."""
    if name is None:
        return (None, None, None)
    if name.startswith("_Z"):
        d = demangle(name)
        return d, short_name(d), name
    return name, short_name(name), None
