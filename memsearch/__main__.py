"""`python -m memsearch ...`: the console script, for when `memsearch` is
not on PATH (a virtualenv not activated, an agent's sandbox)."""

from .entry import entry

entry()
