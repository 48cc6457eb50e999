-- Hebrew points and Arabic harakat folded away (issue 33), as Latin accents
-- are: a voweled word now has its bare spelling as an expansion
-- (memsearch/codewords.py MARKS), so a query typed without them finds it,
-- where unicode61 split it into single letters. The memory files and the
-- transcripts holding such a mark are read again (a superset: any character
-- of the ranges MARKS takes from those two blocks), as 0011 did for all.
WITH mark (glob) AS (SELECT '*[' || char(1425) || '-' || char(1479) || char(1552) || '-' || char(1562)
                            || char(1611) || '-' || char(1631) || char(1648) || char(1750) || '-' || char(1773) || ']*')
UPDATE memory_fts SET size = -1 WHERE body GLOB (SELECT glob FROM mark) OR body_seg GLOB (SELECT glob FROM mark)
    OR name GLOB (SELECT glob FROM mark) OR name_seg GLOB (SELECT glob FROM mark)
    OR description GLOB (SELECT glob FROM mark) OR description_seg GLOB (SELECT glob FROM mark);
WITH mark (glob) AS (SELECT '*[' || char(1425) || '-' || char(1479) || char(1552) || '-' || char(1562)
                            || char(1611) || '-' || char(1631) || char(1648) || char(1750) || '-' || char(1773) || ']*')
UPDATE history_files SET inode = -1 WHERE id IN (SELECT DISTINCT file FROM history_messages
    WHERE body GLOB (SELECT glob FROM mark) OR body_seg GLOB (SELECT glob FROM mark));
