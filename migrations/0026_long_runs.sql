-- Code words (issue 33): a run of letters, digits, _ and - longer than 100
-- characters (memsearch/codewords.py MAX_NAME: a base64 blob, a key) no
-- longer expands to its parts. The memory files whose shadow holds an
-- expansion (U+2064) are read again at the next reconcile (a superset; a
-- size of -1 matches none, as in 0017), so they drop such parts. Transcripts
-- keep the expansions they were read with, as in 0017: a query asks for no
-- part of so long a word, and their text is unchanged.
UPDATE memory_fts SET size = -1
    WHERE body_seg GLOB '*' || char(8292) || '*' OR name_seg GLOB '*' || char(8292) || '*'
        OR description_seg GLOB '*' || char(8292) || '*';
