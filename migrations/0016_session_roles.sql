-- Session pieces indexed with the user's words in a column of their own
-- (issue 30): a session is ranked with what the user wrote weighing more
-- than the replies and tool output around it (memsearch/session_rank.py).
-- The contentless table is made again (automerge off, as 0013 set it) and
-- every piece indexed anew.
DROP TABLE history_session_fts;
CREATE VIRTUAL TABLE history_session_fts USING fts5 (
    idx_user,
    idx_other,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 1'
);
INSERT INTO history_session_fts (history_session_fts, rank) VALUES ('automerge', 0);
INSERT INTO history_session_fts (rowid, idx_user, idx_other)
    SELECT p.id,
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND role = 'user' ORDER BY id)),
        (SELECT group_concat(idx_body, char(10)) FROM (SELECT idx_body FROM history_messages WHERE file = p.file
            AND session = p.session AND id BETWEEN p.first AND p.last AND role <> 'user' ORDER BY id))
    FROM history_pieces AS p;
