-- contextd embedded schema, version 1. Times are unix microseconds (UTC).

CREATE TABLE chats (
    id             INTEGER PRIMARY KEY,
    tenant         TEXT    NOT NULL,
    chat_id        TEXT    NOT NULL,
    user_id        TEXT    NOT NULL DEFAULT '',
    agent          TEXT    NOT NULL,
    last_seq       INTEGER NOT NULL DEFAULT 0,
    -- covered_to_seq of the head summary record (0: none).
    summary_cursor INTEGER NOT NULL DEFAULT 0,
    -- when the oldest turn the summary does not cover arrived (NULL: none);
    -- orders ListSummaryWork oldest work first.
    summary_pending_since INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    UNIQUE (tenant, chat_id)
);
CREATE INDEX chats_user ON chats (tenant, user_id);

CREATE TABLE messages (
    chat       INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    id         TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    name       TEXT    NOT NULL DEFAULT '',
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    metadata   TEXT,
    -- 0 until the indexer marks the turn as embedded in the vector index.
    indexed    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (chat, seq),
    UNIQUE (chat, id)
);
-- The unindexed backlog: small while the indexer keeps up.
CREATE INDEX messages_unindexed ON messages (chat, seq) WHERE indexed = 0;

CREATE TABLE conversation_summaries (
    id             TEXT    PRIMARY KEY,
    chat           INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    parent_id      TEXT,
    depth          INTEGER NOT NULL,
    from_seq       INTEGER NOT NULL,
    to_seq         INTEGER NOT NULL,
    token_count    INTEGER NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT    NOT NULL,
    summary        TEXT    NOT NULL, -- JSON of memory.Summary
    created_at     INTEGER NOT NULL,
    -- one record per depth: the chain can never fork.
    UNIQUE (chat, depth)
);

CREATE TABLE leases (
    chat       INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (chat, kind)
);
