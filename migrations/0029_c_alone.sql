-- Code words (issue 33): C standing alone (not C++, C#, Objective-C) now
-- expands to a token of its own (clanguage), so a file about C ranks above
-- one about C++ or C#, whose C is the same letter to unicode61
-- (memsearch/codewords.py _LONE_C). SQL cannot compute it, so the memory
-- files holding a capital C between characters that are not letters,
-- digits, _, +, # (or ., - before it) are read again at the next reconcile
-- (a superset; a size of -1 matches none, as in 0017). Transcripts keep the
-- expansions they were read with, as in 0025: their lines still match c.
WITH lone (glob) AS (VALUES ('*[^A-Za-z0-9_.+#-]C[^A-Za-z0-9_+#]*'), ('C[^A-Za-z0-9_+#]*'),
                            ('*[^A-Za-z0-9_.+#-]C'), ('C'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM lone WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
