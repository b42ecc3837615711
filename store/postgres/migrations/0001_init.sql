-- contextd PostgreSQL schema, version 1.

CREATE TABLE chats (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant         text        NOT NULL,
    chat_id        text        NOT NULL,
    user_id        text        NOT NULL DEFAULT '',
    agent          text        NOT NULL,
    last_seq       bigint      NOT NULL DEFAULT 0,
    -- covered_to_seq of the head summary record (0: none).
    summary_cursor bigint      NOT NULL DEFAULT 0,
    -- when the oldest turn the summary does not cover arrived (NULL: none);
    -- orders ListSummaryWork oldest work first.
    summary_pending_since timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    UNIQUE (tenant, chat_id)
);
CREATE INDEX chats_user ON chats (tenant, user_id);
CREATE INDEX chats_summary_work ON chats (summary_pending_since) WHERE last_seq > summary_cursor;

CREATE TABLE messages (
    chat       bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL,
    id         text        NOT NULL,
    role       text        NOT NULL,
    name       text        NOT NULL DEFAULT '',
    content    text        NOT NULL,
    created_at timestamptz NOT NULL,
    metadata   jsonb,
    -- false until the indexer marks the turn as embedded in the vector index.
    indexed    boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (chat, seq),
    UNIQUE (chat, id)
);
-- The unindexed backlog: small while the indexer keeps up.
CREATE INDEX messages_unindexed ON messages (chat, seq) WHERE NOT indexed;

CREATE TABLE conversation_summaries (
    id             uuid        PRIMARY KEY,
    chat           bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    -- tenant and chat_id repeat the chat's, for plain-SQL reporting.
    tenant         text        NOT NULL,
    chat_id        text        NOT NULL,
    parent_id      uuid        REFERENCES conversation_summaries (id) ON DELETE CASCADE,
    depth          integer     NOT NULL,
    from_seq       bigint      NOT NULL,
    to_seq         bigint      NOT NULL,
    covered_from_seq bigint    NOT NULL,
    covered_to_seq bigint      NOT NULL,
    token_count    integer     NOT NULL,
    model          text        NOT NULL,
    prompt_version text        NOT NULL,
    summary        jsonb       NOT NULL, -- memory.Summary
    created_at     timestamptz NOT NULL,
    -- one record per depth: the chain can never fork.
    UNIQUE (chat, depth)
);
CREATE INDEX conversation_summaries_tenant_chat ON conversation_summaries (tenant, chat_id, depth DESC);

CREATE TABLE leases (
    chat       bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    kind       text        NOT NULL,
    owner      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (chat, kind)
);
