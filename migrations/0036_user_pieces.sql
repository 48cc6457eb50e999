-- What the user wrote in each session piece, indexed again in a table of its
-- own (issue 30): a pair holding a stop word ("the bus") and a search of the
-- user's messages alone are matched there. A column filter on
-- history_session_fts still reads the stop word's positions in the replies
-- and tool output, most of a piece's tokens. A piece where the user said
-- nothing has no row. The texts are read as memsearch/pieces.py reads them:
-- by the ids of a piece's messages, or where those are mostly other
-- sessions' (a file's lines claiming many), through the session's index.
CREATE VIRTUAL TABLE history_user_fts USING fts5 (
    idx_user,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 1'
);
INSERT INTO history_user_fts (history_user_fts, rank) VALUES ('automerge', 0);
INSERT INTO history_user_fts (rowid, idx_user)
    SELECT id, said FROM (SELECT p.id,
        (SELECT group_concat(idx_body, char(10)) FROM (
            SELECT id, idx_body FROM history_messages WHERE p.last - p.first < 4 * p.messages
                AND id BETWEEN p.first AND p.last AND +file = p.file AND +session = p.session
                AND sidechain = 0 AND role = 'user'
            UNION ALL SELECT id, idx_body FROM history_messages INDEXED BY history_messages_session
                WHERE NOT (p.last - p.first < 4 * p.messages) AND session = p.session AND project = p.project
                AND sidechain IN (0, 1) AND file = p.file AND id BETWEEN p.first AND p.last
                AND sidechain = 0 AND role = 'user'
            ORDER BY id)) AS said
        FROM history_pieces AS p LIMIT -1)
    WHERE said IS NOT NULL;
