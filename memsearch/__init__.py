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
from .context import format_index_for_context, index_for_context
from .identity import main_git_dir, mimo_project_id, zcode_memory_dir, zcode_project_folder
from .index import MemoryIndex, SearchResult
from .manifest import ManifestEntry, format_manifest, manifest
from .query import build_query
from .reconcile import ReconcileReport
from .roots import Root
from .search import Hit
from .walk import Skipped

__all__ = [
    "DatabaseCorrupt",
    "DatabaseError",
    "DatabaseLocked",
    "Hit",
    "ManifestEntry",
    "MemoryIndex",
    "MemsearchError",
    "NoSearchableWords",
    "ReconcileReport",
    "Root",
    "RootNotFound",
    "SchemaTooNew",
    "SearchResult",
    "Skipped",
    "build_query",
    "format_index_for_context",
    "format_manifest",
    "index_for_context",
    "main_git_dir",
    "manifest",
    "mimo_project_id",
    "zcode_memory_dir",
    "zcode_project_folder",
]

__version__ = "0.1.0"
