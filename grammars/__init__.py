"""pyparsing grammars, one module per format family (installed as ``loganalyze.grammars``)."""
