"""``python -m loganalyze``: the same as the ``loganalyze`` command."""
from .console import main

main()
