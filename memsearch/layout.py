"""What a file's place in the memory tree says about it: scope, scope id, type.

    <scope>/<scope_id>/<key>.md            scope in global | projects | sessions
    sessions/<id>/tasks/<TID>/progress.md  type progress
    sessions/<id>/tasks/<TID>/notes.md     type notes

Any other Markdown file under the root is indexed with no scope.
"""

from __future__ import annotations

SCOPES = ("global", "projects", "sessions")


def classify(relpath: str) -> tuple[str | None, str | None, str]:
    """(scope, scope_id, type) of a '/'-separated path relative to the root."""
    parts = relpath.split("/")
    scope = scope_id = None
    if len(parts) >= 3 and parts[0] in SCOPES:
        scope, scope_id = parts[0], parts[1]
    return scope, scope_id, file_type(parts)


def file_type(parts: list[str]) -> str:
    key = parts[-1][:-3].lower() if parts[-1].lower().endswith(".md") else parts[-1].lower()
    if len(parts) >= 3 and parts[-3] == "tasks" and key in ("progress", "notes"):
        return key
    if key == "memory" or key.startswith("memory-"):
        return "memory"
    if key == "checkpoint" or key.startswith("checkpoint-"):
        return "checkpoint"
    return "free"
