"""python -m m0serve: the same as the m0serve console script (and how a
master starts its workers)."""

from m0serve import main

main()
