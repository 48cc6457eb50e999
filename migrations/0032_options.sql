-- Code words (issue 33): a command line's option of several words
-- (--dry-run, --no-verify) now expands to its words joined after its
-- first occurrence (dryrun), so --dry-run ranks above prose's "dry run"
-- (memsearch/codewords.py _OPTION); a run joined by - alone still gets
-- nothing. SQL cannot compute it, so the memory files holding two dashes
-- before a letter or digit are read again at the next reconcile (a
-- superset; a size of -1 matches none, as in 0017). Transcripts keep the
-- expansions they were read with, as in 0025: their lines still match the
-- option's words.
UPDATE memory_fts SET size = -1 WHERE idx_body GLOB '*--[A-Za-z0-9]*' OR idx_name GLOB '*--[A-Za-z0-9]*'
                                      OR idx_description GLOB '*--[A-Za-z0-9]*';
