-- contextd embedded schema, version 6: rebuilding only what a deleted
-- message touched (issue 40).
--
-- chats.dirty_from is the smallest seq deleted (or found deleted under a
-- new summary record) since the summary was last clean; it means something
-- only while summary_dirty > 0, and 0 there means "from the first turn"
-- (chats marked before this version). The summary's records up to the last
-- one ending before it cannot hold the deleted turn: the rebuild keeps them
-- and extends from there, and contexts serve that record meanwhile.
ALTER TABLE chats ADD COLUMN dirty_from INTEGER NOT NULL DEFAULT 0;
-- The first record reaching a seq, without reading the records.
CREATE INDEX conversation_summaries_to ON conversation_summaries (chat, to_seq, depth);
