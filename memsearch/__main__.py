"""`python -m memsearch ...`: the console script, for when `memsearch` is
not on PATH (a virtualenv not activated, an agent's sandbox)."""

if __name__ == "__main__":  # importing the module (pkgutil, tests) runs nothing
    from .entry import entry

    entry()
