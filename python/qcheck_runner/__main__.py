"""python -m qcheck_runner MODULE [MODULE...] MANIFEST (see qcheck_runner/__init__.py)."""
import sys

from qcheck_runner import main

sys.exit(main())
