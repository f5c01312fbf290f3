"""python -m m0serve: the same as the m0serve console script."""

from m0serve import main

main()
