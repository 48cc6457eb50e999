"""memsearch: always-fresh full-text search over agents' Markdown memory.

The public names below are imported on first use (PEP 562), so that
``memsearch query`` loads only the modules a query needs: a one-shot
process pays for every import on every call.
"""

from importlib import import_module

# public name -> the module that defines it
_EXPORTS = {
    "DatabaseCorrupt": "errors",
    "DatabaseError": "errors",
    "DatabaseLocked": "errors",
    "Freshness": "freshness",
    "HistoryHit": "history",
    "HistoryIndex": "history",
    "HistoryReport": "history",
    "HistoryResult": "history",
    "Hit": "search",
    "InvalidArgument": "errors",
    "ManifestEntry": "manifests",
    "MemoryIndex": "index",
    "MemsearchError": "errors",
    "NoSearchableWords": "errors",
    "NotAMemoryFile": "errors",
    "RebuildContext": "rebuild",
    "ReconcileReport": "reconcile",
    "Root": "roots",
    "RootNotFound": "errors",
    "SchemaTooNew": "errors",
    "SessionContext": "session_context",
    "SessionNotFound": "errors",
    "SearchResult": "index",
    "Skipped": "walk",
    "UnknownFilter": "errors",
    "Watcher": "watch",
    "WatcherError": "errors",
    "WriteDenied": "write_gate",
    "build_query": "query",
    "check_write": "write_gate",
    "format_index_for_context": "context",
    "format_manifest": "manifests",
    "index_for_context": "context",
    "main_git_dir": "identity",
    "manifest": "manifests",
    "mimo_project_id": "identity",
    "read_session_context": "history",
    "rebuild_context": "rebuild",
    "zcode_memory_dir": "identity",
    "zcode_project_folder": "identity",
}

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
