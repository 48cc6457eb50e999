-- Code words (issue 33): a full-width ＿ or － now joins the full-width
-- letters around it into one folded word (ｕｓｅｒ＿ｉｄ is folded as
-- user_id, where its halves were folded apart and a query for user_id found
-- nothing), and ＿ splits a full-width identifier as _ does. The memory
-- files and the transcripts holding either character are read again (a size
-- of -1, an inode of -1 match none, as in 0019).
WITH joiner (glob) AS (VALUES ('*[' || char(65293, 65343) || ']*'))
UPDATE memory_fts SET size = -1 WHERE EXISTS (SELECT 1 FROM joiner WHERE idx_body GLOB glob
                                              OR idx_name GLOB glob OR idx_description GLOB glob);
UPDATE history_files SET inode = -1 WHERE id IN (SELECT DISTINCT file FROM history_messages
    WHERE coalesce(body_seg, body) GLOB '*[' || char(65293, 65343) || ']*');
