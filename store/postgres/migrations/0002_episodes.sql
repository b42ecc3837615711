-- contextd PostgreSQL schema, version 2: episodes (issue 15). A chat's
-- closed episodes own contiguous, non-overlapping seq ranges from 1; they
-- are written whole in one transaction and erased with their chat.

CREATE TABLE episodes (
    id             uuid        PRIMARY KEY,
    chat           bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    -- tenant and chat_id repeat the chat's, for plain-SQL reporting.
    tenant         text        NOT NULL,
    chat_id        text        NOT NULL,
    from_seq       bigint      NOT NULL,
    to_seq         bigint      NOT NULL,
    started_at     timestamptz NOT NULL,
    ended_at       timestamptz NOT NULL,
    short          text        NOT NULL,
    summary        jsonb       NOT NULL, -- memory.Summary
    model          text        NOT NULL,
    prompt_version text        NOT NULL,
    created_at     timestamptz NOT NULL,
    -- false until the indexer marks the episode as in the vector index.
    indexed        boolean     NOT NULL DEFAULT false,
    CHECK (from_seq >= 1 AND to_seq >= from_seq),
    UNIQUE (chat, from_seq),
    UNIQUE (chat, to_seq)
);
CREATE INDEX episodes_unindexed ON episodes (chat, from_seq) WHERE NOT indexed;
