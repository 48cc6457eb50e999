-- Code words and folded letters (issue 33; see memsearch/codewords.py).
--
-- The shadow columns of 0004 (body_seg, name_seg, description_seg; in
-- history, history_messages.body_seg) now also hold each word's expansion:
-- the parts of getUserById (and the join of get_userById), the name of C++ (cplusplus)
-- and .NET (dotnet), and the folded form of a word whose accents unicode61
-- leaves (Greek, Cyrillic, Vietnamese, ı, full-width letters). SQL cannot
-- compute them, so every file is read again: the next reconcile re-reads
-- each memory file (a size of -1 matches none, as in 0008), and the next history
-- refresh each transcript from its start (an inode no file has fails the
-- check that its start is unchanged, which drops its messages first). Until
-- then the rows answer as before: the tokenizer and the tables are unchanged.
UPDATE memory_fts SET size = -1;
UPDATE history_files SET inode = -1;
