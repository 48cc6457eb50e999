"""What a file's place in the memory tree says about it: scope, scope id, type.

    <scope>/<scope_id>/<key>.md            scope in global | projects | sessions
    sessions/<id>/tasks/<TID>/progress.md  type progress
    sessions/<id>/tasks/<TID>/notes.md     type notes
    <any>/checkpoint.md, checkpoint-*.md   type checkpoint
    <any>/MEMORY.md, memory-*.md           type memory (any letter case)

Any other Markdown file under the root is indexed with no scope. As in
MiMo Code itself, only the memory class ignores letter case:
``Checkpoint.md`` or ``tasks/T1/Progress.md`` is ``free``.
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
    name = parts[-1]
    if len(parts) >= 3 and parts[-3] == "tasks" and name in ("progress.md", "notes.md"):
        return name[:-3]
    folded = name.lower()
    if folded.endswith(".md") and (folded == "memory.md" or folded.startswith("memory-")):
        return "memory"
    if name.endswith(".md") and (name == "checkpoint.md" or name.startswith("checkpoint-")):
        return "checkpoint"
    return "free"
