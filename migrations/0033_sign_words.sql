-- Code words (issue 33): a name a dollar sign begins ($HOME, ${HOME}, not
-- a price) and a number a # begins (#1234, an issue's) now also expand to a
-- token of their own after each occurrence (dollarhome, hash1234), so they
-- rank above a file saying "go home" or "1234 rows", as .env does (0031;
-- memsearch/codewords.py _SIGN_WORDS). SQL cannot compute it, so the memory
-- files holding a $ before a letter, _ or {, or a # before a digit, are
-- read again at the next reconcile (a superset; a size of -1 matches none,
-- as in 0017). Transcripts keep the expansions they were read with, as in
-- 0025: their lines still match the name's word.
WITH sign (glob) AS (VALUES ('*$[A-Za-z_{]*'), ('*#[0-9]*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM sign WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
