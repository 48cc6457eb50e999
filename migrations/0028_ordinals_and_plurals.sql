-- Code words (issue 33): an ordinal (15th) now expands to its number alone,
-- and a plural of capitals (TVs, APIs) or a decade (1990s) to nothing (the
-- porter stemmer finds them by TV and 1990); they were split into words of
-- nothing (15 th, T Vs, 1990 s). SQL cannot compute expansions, so the
-- memory files whose shadow holds a digit before s, n, r or t, or two
-- capitals before an s, are read again at the next reconcile (a superset;
-- a file with no shadow had no expansion; a size of -1 matches none, as in
-- 0017). Transcripts keep the expansions they were read with, as in 0025:
-- their lines still match the number and the word.
WITH shape (glob) AS (VALUES ('*[0-9][snrt]*'), ('*[A-Z][A-Z]s*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM shape WHERE body_seg GLOB glob
                                              OR name_seg GLOB glob OR description_seg GLOB glob);
