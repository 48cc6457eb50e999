-- Code words (issue 33): a name an @ begins, not after a word (@Transactional,
-- @property, @alice; not me@x.org, nor a scope's @types/), now also expands
-- to a token of its own after each occurrence (atsigntransactional), so it
-- ranks above a file saying "transactional emails", as $HOME does (0033;
-- memsearch/codewords.py _SIGN_WORDS); and a C before a colon and a
-- character that is not a space is a drive ({{C:}}, as C:\ was in 0029), no
-- longer C the language. SQL cannot compute the first, so the memory files
-- holding an @ before a letter are read again at the next reconcile (a
-- superset; a size of -1 matches none, as in 0017), and so are those whose
-- indexed copy holds C, its clanguage expansion (between U+2064 and U+2062,
-- memsearch/codewords.py OPEN and CLOSE), then a colon and any character.
-- Transcripts keep the expansions they were read with, as in 0025.
WITH sign (glob) AS (VALUES ('*@[A-Za-z]*'), ('*C' || char(8292) || 'clanguage' || char(8290) || ':?*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM sign WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
