-- Code words (issue 33): a run of letters, digits, _ and - longer than 100
-- characters (memsearch/codewords.py MAX_NAME: a base64 blob, a key) no
-- longer expands to its parts. The memory files whose shadow holds an
-- expansion (U+2064 ... U+2062) of 90 characters or more, which such a run's
-- parts or join make, are read again at the next reconcile (a superset; a
-- size of -1 matches none, as in 0017). The GLOB starts at each U+2064, so it
-- costs the expansions' length, not the text's (a GLOB for the run itself
-- took 5 s on a 2 MB run). Transcripts keep the expansions they were read
-- with, as in 0017: a query asks for no part of so long a word.
WITH long (glob) AS (
    SELECT '*' || char(8292) || replace(printf('%.*c', 90, 'x'), 'x', '[^' || char(8290) || ']') || '*')
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM long WHERE body_seg GLOB glob
                                              OR name_seg GLOB glob OR description_seg GLOB glob);
