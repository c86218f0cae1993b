"""``python -m loganalyze``: the same as the ``loganalyze`` command."""
from .cli import main

main()
