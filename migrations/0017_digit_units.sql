-- Names with digits in them (issue 33): an identifier's expansion now also
-- holds its units, split at case changes alone and at digits alone
-- (Base64Encode: base64; S3Bucket: s3; OAuth2: oauth), so that the name a
-- user types finds the identifier (memsearch/codewords.py). SQL cannot
-- compute them, so the memory files that may gain some are read again at
-- the next reconcile: those whose shadow holds an expansion (U+2064)
-- followed somewhere by a digit, a superset of them (a size of -1 matches
-- none, as in 0011). Transcripts are not: the same test marks nearly every
-- one (all 3,027 of the 1 GB bench history, 139 s to read again), so their
-- lines keep the expansions they were read with and gain units when read
-- again; new lines have them.
UPDATE memory_fts SET size = -1
    WHERE body_seg GLOB '*' || char(8292) || '*[0-9]*' OR name_seg GLOB '*' || char(8292) || '*[0-9]*'
        OR description_seg GLOB '*' || char(8292) || '*[0-9]*';
