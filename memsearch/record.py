"""Immutable records that behave as frozen dataclasses, minus their start-up cost.

Building a ``@dataclass(frozen=True)`` class generates its methods from
source text at import: ~1.2 ms each (measured), and a one-shot
``memsearch query`` process pays it for every such class it imports. A
:class:`Record` subclass names its fields in ``__match_args__``, stores them
in ``__slots__`` with :meth:`Record._set` in its ``__init__``, and gets what
the dataclass gave: ``==`` between records of one class, ``hash``, the same
``repr``, ``FrozenInstanceError`` on assignment, pickling and copying;
``_replace()`` stands in for ``dataclasses.replace()``.
"""

from __future__ import annotations


class Record:
    __slots__ = ()
    # The fields, in the order __init__ takes them.
    __match_args__: tuple[str, ...] = ()
    # The fields repr() shows (a dataclass field(repr=False) is left out); None: all.
    _repr_fields: tuple[str, ...] | None = None

    def _set(self, **values) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def _replace(self, **changes):
        """A copy with some fields changed, as dataclasses.replace() makes it
        (through __init__, so its checks run again)."""
        return type(self)(**{**dict(zip(self.__match_args__, self._values())), **changes})

    def __setattr__(self, name, value):
        from dataclasses import FrozenInstanceError  # imported only to be raised

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self):
        return hash(self._values())

    def __repr__(self) -> str:
        shown = self.__match_args__ if self._repr_fields is None else self._repr_fields
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    def __reduce__(self):
        return type(self), self._values()
