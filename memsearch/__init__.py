"""memsearch: always-fresh full-text search over agents' Markdown memory.

The public names are imported on first use (PEP 562): a one-shot ``memsearch query`` loads only what it needs.
"""

from importlib import import_module

# public name -> the module that defines it
_EXPORTS = {name: module for module, names in {
    "errors": "AmbiguousSession DatabaseCorrupt DatabaseError DatabaseLocked InvalidArgument MemsearchError"
              " NoSearchableWords NotAMemoryFile RootNotFound SchemaTooNew SessionNotFound UnknownFilter WatcherError",
    "freshness": "Freshness",
    "history": "HistoryHit HistoryIndex HistoryReport HistoryResult read_session_context",
    "search": "Hit",
    "manifests": "ManifestEntry format_manifest manifest",
    "index": "MemoryIndex SearchResult",
    "rebuild": "RebuildContext rebuild_context",
    "reconcile": "ReconcileReport",
    "roots": "Root",
    "session_context": "SessionContext",
    "walk": "Skipped",
    "watch": "Watcher",
    "write_gate": "WriteDenied check_write",
    "query": "build_query",
    "context": "format_index_for_context index_for_context",
    "identity": "main_git_dir mimo_project_id zcode_memory_dir zcode_project_folder",
}.items() for name in names.split()}

__all__ = sorted(_EXPORTS)

__version__ = "0.1.0"


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memsearch' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
