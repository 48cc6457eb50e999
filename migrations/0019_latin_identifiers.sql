-- Code words (issue 33): an identifier typed with accented Latin or
-- full-width letters (ÜberClient, naïveBayes, ｇｅｔＵｓｅｒ) now splits into
-- parts as an ASCII one does; ß, æ and œ fold to ss, ae and oe as accents do
-- (a query typed with them now asks for the folded spelling alone); a symbol
-- may be followed by its version (C++17, C#10). The memory files that may
-- gain an expansion are read again at the next reconcile (a size of -1
-- matches none, as in 0011): those holding a letter of the Latin or
-- full-width ranges memsearch.codewords folds, or a digit after ++ or after
-- a letter's # (a superset). Transcripts are read again only for ß, æ and œ,
-- which a query no longer asks for as typed (the rest, as in 0017, would mark
-- most of them; their lines gain the forms when read again).
WITH pattern (glob) AS (VALUES ('*[' || char(192) || '-' || char(591) || char(7680) || '-' || char(7935)
                                || char(65296) || '-' || char(65370) || ']*'),
                               ('*[A-Za-z0-9]++[0-9]*'), ('*[A-Za-z0-9]#[0-9]*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM pattern WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
UPDATE history_files SET inode = -1 WHERE id IN (SELECT DISTINCT file FROM history_messages
    WHERE coalesce(body_seg, body) GLOB '*[' || char(223, 7838, 230, 198, 339, 338) || ']*');
