-- Code words (issue 33): a name a dot begins, not a folder's (.env,
-- .gitignore, *.md; not .planning/), now also expands to a token of its
-- own after each occurrence (dotenv), so .env ranks above a file saying
-- "env vars" (memsearch/codewords.py _SIGN_WORDS). SQL cannot compute it,
-- so the memory files holding a dot before a letter, at the start or after
-- a character that is not a letter, digit, _, a dot, a closing bracket, ?
-- or !, are read again at the next reconcile (a superset; a size of -1
-- matches none, as in 0017). Transcripts keep the expansions they were
-- read with, as in 0025: their lines still match the name's word.
WITH dot (glob) AS (VALUES ('*[^]A-Za-z0-9_.)}?!].[A-Za-z]*'), ('.[A-Za-z]*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM dot WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
