-- Code words (issue 33): a dotted number (a version, 2.0.7, 1.2; an
-- address) now also expands to a token of its own after its first
-- occurrence (2dot0dot7), so 2.0.7 is not found as well in 2.0.7.1, whose
-- words 2 0 7 are the same to unicode61 (memsearch/codewords.py _dotted).
-- SQL cannot compute it, so the memory files holding a digit, a dot and a
-- digit are read again at the next reconcile (a superset; a size of -1
-- matches none, as in 0017). Transcripts keep the expansions they were read
-- with, as in 0025: their lines still match the digits' phrase.
UPDATE memory_fts SET size = -1 WHERE idx_body GLOB '*[0-9].[0-9]*' OR idx_name GLOB '*[0-9].[0-9]*'
                                      OR idx_description GLOB '*[0-9].[0-9]*';
