-- A piece of a sub-agent's lines alone has no text to rank and is no longer
-- indexed (memsearch/pieces.py), so it counts in no word's rarity nor the
-- pieces' average length: its row, indexed by 0022 with no text, goes (a
-- contentless row is deleted with the values it was indexed with).
INSERT INTO history_session_fts (history_session_fts, rowid, idx_user, idx_other)
    SELECT 'delete', p.id, NULL, NULL FROM history_pieces AS p
    WHERE NOT EXISTS (SELECT 1 FROM history_messages WHERE id BETWEEN p.first AND p.last AND file = p.file
        AND session = p.session AND sidechain = 0);
