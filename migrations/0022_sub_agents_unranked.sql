-- A session is ranked by its own course (issue 30): a sub-agent's lines (its
-- "user" ones are the prompts the main agent wrote it, not the user's words)
-- are in neither column (memsearch/pieces.py). Every piece is indexed anew, as
-- 0016 did.
INSERT INTO history_session_fts (history_session_fts) VALUES ('delete-all');
INSERT INTO history_session_fts (rowid, idx_user, idx_other)
    SELECT p.id,
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND sidechain = 0 AND role = 'user'
            ORDER BY id)),
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND sidechain = 0 AND role <> 'user'
            ORDER BY id))
    FROM history_pieces AS p;
