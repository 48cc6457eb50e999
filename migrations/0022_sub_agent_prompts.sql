-- A session's user column holds what its user wrote (issue 30): a sub-agent's
-- "user" lines, the prompts the main agent wrote it, go with the replies and
-- tool output (memsearch/pieces.py). Every piece is indexed anew, as 0016 did.
INSERT INTO history_session_fts (history_session_fts) VALUES ('delete-all');
INSERT INTO history_session_fts (rowid, idx_user, idx_other)
    SELECT p.id,
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND (role = 'user' AND sidechain = 0)
            ORDER BY id)),
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND NOT (role = 'user' AND sidechain = 0)
            ORDER BY id))
    FROM history_pieces AS p;
