"""``python -m flashlab``: the ``flashlab`` command line."""

from flashlab.cli import main

main()
