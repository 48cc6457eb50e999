-- Code words (issue 33): an identifier with a _ (user_id, API_KEY, which
-- unicode61 splits) now has its parts joined as an expansion (userid,
-- apikey), so the name ranks above prose's "user id" and meets userId whole
-- (memsearch/codewords.py). SQL cannot compute them, so the memory files
-- holding a _ or a full-width ＿ are read again at the next reconcile (a
-- superset; a size of -1 matches none, as in 0017). Transcripts are not, as
-- in 0017: nearly every one holds a _; their lines keep the expansions they
-- were read with (the phrase still finds them) and new lines have the joins.
WITH joint (glob) AS (VALUES ('*[_' || char(65343) || ']*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM joint WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
