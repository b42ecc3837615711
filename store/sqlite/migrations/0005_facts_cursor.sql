-- contextd embedded schema, version 5: the facts-on-arrival cursor.
--
-- Facts are drawn from new turns in the background, not in the append:
-- facts_cursor is the last seq whose facts were drawn. Turns stored before
-- this version had theirs drawn in their append, so the cursor starts at
-- last_seq.
ALTER TABLE chats ADD COLUMN facts_cursor INTEGER NOT NULL DEFAULT 0;
UPDATE chats SET facts_cursor = last_seq;
-- The backlog: small while the facts job keeps up.
CREATE INDEX chats_undrawn ON chats (updated_at, id) WHERE last_seq > facts_cursor;
