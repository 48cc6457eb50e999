-- Code words (issue 33): a Python special name (__init__, __main__), which
-- unicode61 reads as the bare word (init), now also expands to a token of
-- its own (dunderinit), so a file naming it ranks above one saying "init"
-- (memsearch/codewords.py _DUNDER_RUN). SQL cannot compute it, so the memory
-- files holding a __ are read again at the next reconcile (a superset; a
-- size of -1 matches none, as in 0017). Transcripts keep the expansions they
-- were read with, as in 0025: their lines still match the word, and new
-- lines have the token.
UPDATE memory_fts SET size = -1 WHERE idx_body GLOB '*__*' OR idx_name GLOB '*__*' OR idx_description GLOB '*__*';
