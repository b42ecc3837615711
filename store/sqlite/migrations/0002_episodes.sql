-- contextd embedded schema, version 2: episodes (issue 15). A chat's closed
-- episodes own contiguous, non-overlapping seq ranges from 1; they are
-- written whole in one transaction and erased with their chat.

CREATE TABLE episodes (
    id             TEXT    PRIMARY KEY,
    chat           INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    from_seq       INTEGER NOT NULL,
    to_seq         INTEGER NOT NULL,
    started_at     INTEGER NOT NULL,
    ended_at       INTEGER NOT NULL,
    short          TEXT    NOT NULL,
    summary        TEXT    NOT NULL, -- JSON of memory.Summary
    model          TEXT    NOT NULL,
    prompt_version TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    -- 0 until the indexer marks the episode as in the vector index.
    indexed        INTEGER NOT NULL DEFAULT 0,
    CHECK (from_seq >= 1 AND to_seq >= from_seq),
    UNIQUE (chat, from_seq),
    UNIQUE (chat, to_seq)
);
CREATE INDEX episodes_unindexed ON episodes (chat, from_seq) WHERE indexed = 0;
