"""memsearch: always-fresh full-text search over agents' Markdown memory."""

from .errors import (
    DatabaseCorrupt,
    DatabaseError,
    DatabaseLocked,
    MemsearchError,
    NoSearchableWords,
    RootNotFound,
    SchemaTooNew,
)
from .index import MemoryIndex, SearchResult
from .query import build_query
from .reconcile import ReconcileReport
from .search import Hit
from .walk import Skipped

__all__ = [
    "DatabaseCorrupt",
    "DatabaseError",
    "DatabaseLocked",
    "Hit",
    "MemoryIndex",
    "MemsearchError",
    "NoSearchableWords",
    "ReconcileReport",
    "RootNotFound",
    "SchemaTooNew",
    "SearchResult",
    "Skipped",
    "build_query",
]

__version__ = "0.1.0"
