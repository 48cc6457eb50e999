-- Code words (issue 33): a C after a degree sign (200°C, 4ºC, 20 °C) is
-- degrees Celsius, no longer C the language (memsearch/codewords.py
-- _LONE_C_SIDES): 0029 gave it clanguage. SQL cannot compute expansions, so
-- the memory files whose indexed copy holds such a C with its clanguage
-- expansion (between U+2064 and U+2062, memsearch/codewords.py OPEN and
-- CLOSE) are read again at the next reconcile (a size of -1 matches none,
-- as in 0017). Transcripts keep the expansions they were read with, as in
-- 0025.
WITH degree (glob) AS (VALUES ('*°C' || char(8292) || 'clanguage' || char(8290) || '*'),
                              ('*ºC' || char(8292) || 'clanguage' || char(8290) || '*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM degree WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
