-- A sub-agent's transcript (agent-*.jsonl) is marked so by its name: its
-- lines are sub-agent lines whatever their isSidechain claims, so a file so
-- named cannot pass its lines for a session's own in read_session_context.
-- Such files are read again (a superset: a folder so named matches too).
UPDATE history_files SET inode = -1 WHERE path GLOB 'agent-*' OR path GLOB '*/agent-*';
