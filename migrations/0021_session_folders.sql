-- A transcript below a session's folder (<project>/<session>/...) is a
-- sub-agent's by its place, as Claude Code writes only those there: its
-- lines are sub-agent lines whatever their isSidechain claims, so such a file
-- cannot pass its lines for the session's own in read_session_context.
-- Such files are read again (sub-agents' agent-*.jsonl there too).
UPDATE history_files SET inode = -1 WHERE path GLOB '*/*/*';
