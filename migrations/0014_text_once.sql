-- Each text stored once (issue 33): where a shadow column (body_seg, name_seg,
-- description_seg; history_messages.body_seg) holds a text with its
-- expansions and bigrams, the text column is '' and readers derive the text
-- from the shadow (memsearch.cjk.original). Before, nearly every row of code
-- held its text twice. The indexed columns (idx_*) are unchanged, so FTS5's
-- index and its triggers are too, and these updates cost no index work.
--
-- An ASCII text (its byte length its length in characters: no NUL either) is
-- what its shadow gives back without the expansions, whichever version wrote
-- it: emptied here. SQL cannot check the rest (a text not in NFC keeps its
-- copy), so it is read again: the next reconcile re-reads those memory files
-- (a size of -1 matches none, as in 0011), the next history refresh those
-- transcripts from their start (an inode no file has drops their messages).
UPDATE memory_fts SET body = '' WHERE body_seg IS NOT NULL AND length(CAST(body AS BLOB)) = length(body);
UPDATE memory_fts SET name = '' WHERE name_seg IS NOT NULL AND length(CAST(name AS BLOB)) = length(name);
UPDATE memory_fts SET description = ''
    WHERE description_seg IS NOT NULL AND length(CAST(description AS BLOB)) = length(description);
UPDATE memory_fts SET size = -1
    WHERE (body_seg IS NOT NULL AND body <> '') OR (name_seg IS NOT NULL AND name <> '')
    OR (description_seg IS NOT NULL AND description <> '');

UPDATE history_messages SET body = '' WHERE body_seg IS NOT NULL AND length(CAST(body AS BLOB)) = length(body);
UPDATE history_files SET inode = -1
    WHERE id IN (SELECT file FROM history_messages WHERE body_seg IS NOT NULL AND body <> '');
