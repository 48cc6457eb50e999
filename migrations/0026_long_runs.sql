-- Code words (issue 33): a run of letters, digits, _ and - longer than 100
-- characters (memsearch/codewords.py MAX_NAME: a base64 blob, a key) no
-- longer expands to its parts. The memory files whose shadow holds an
-- expansion (U+2064) right after more than 100 such characters are read
-- again at the next reconcile (a size of -1 matches none, as in 0017), so
-- they drop those parts. Transcripts keep the expansions they were read
-- with, as in 0017: a query asks for no part of so long a word.
WITH long (glob) AS (SELECT '*' || replace(printf('%.*c', 101, 'x'), 'x', '[A-Za-z0-9_-]') || char(8292) || '*')
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM long WHERE body_seg GLOB glob
                                              OR name_seg GLOB glob OR description_seg GLOB glob);
