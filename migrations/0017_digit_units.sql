-- Names with digits in them (issue 33): an identifier's expansion now also
-- holds its units, split at case changes alone and at digits alone
-- (Base64Encode: base64; S3Bucket: s3; OAuth2: oauth), so that the name a
-- user types finds the identifier (memsearch/codewords.py). SQL cannot
-- compute them, so the files that may gain some are read again: those with
-- an expansion (U+2064) followed somewhere by a digit, a superset of them.
-- Memory files at the next reconcile (a size of -1 matches none, as in
-- 0011), transcripts at the next refresh from their start (an inode no file
-- has). Until then those rows answer as before.
UPDATE memory_fts SET size = -1
    WHERE body_seg GLOB '*' || char(8292) || '*[0-9]*' OR name_seg GLOB '*' || char(8292) || '*[0-9]*'
        OR description_seg GLOB '*' || char(8292) || '*[0-9]*';
UPDATE history_files SET inode = -1 WHERE id IN (
    SELECT DISTINCT file FROM history_messages WHERE body_seg GLOB '*' || char(8292) || '*[0-9]*');
