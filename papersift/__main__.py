"""``python -m papersift``: the same CLI as the ``papersift`` script."""

from papersift.extract.interface.cli import main

main()
