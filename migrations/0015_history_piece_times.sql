-- When each session piece was held (issue 30): the first and last times of
-- its messages, so that a question naming a date ("on 9 December 2023")
-- ranks the sessions held then higher (memsearch/dates.py) from this table
-- alone. NULL where no message of the piece has a time.
ALTER TABLE history_pieces ADD COLUMN first_at TEXT;
ALTER TABLE history_pieces ADD COLUMN last_at TEXT;
UPDATE history_pieces SET (first_at, last_at) = (
    SELECT min(m.at), max(m.at) FROM history_messages AS m WHERE m.file = history_pieces.file
        AND m.session = history_pieces.session AND m.id BETWEEN history_pieces.first AND history_pieces.last);
