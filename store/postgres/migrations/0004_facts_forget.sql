-- contextd PostgreSQL schema, version 4: facts (issue 19) and forgetting
-- one message (issue 22).
--
-- A deleted message stays as a tombstone (deleted, no content, name or
-- metadata) so that seqs stay gap-free. What was derived from it is marked,
-- in the same transaction, and rebuilt from the marks by background work:
-- chats.summary_dirty and episodes.rebuild are 0 when clean, otherwise a
-- counter each deletion bumps, so that a rebuild that read an older mark
-- does not clear a newer one; forgets lists the turns whose vectors and
-- profile items must still go.

ALTER TABLE chats ADD COLUMN summary_dirty bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN deleted boolean NOT NULL DEFAULT false;
CREATE INDEX messages_deleted ON messages (chat, seq) WHERE deleted;
ALTER TABLE episodes ADD COLUMN rebuild bigint NOT NULL DEFAULT 0;
CREATE INDEX episodes_rebuild ON episodes (chat, from_seq) WHERE rebuild > 0;

CREATE TABLE facts (
    chat          bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    -- tenant and chat_id repeat the chat's, for plain-SQL reporting.
    tenant        text        NOT NULL,
    chat_id       text        NOT NULL,
    id            text        NOT NULL,
    text          text        NOT NULL,
    seqs          bigint[]    NOT NULL, -- the source seqs, ascending
    first_seq     bigint      NOT NULL, -- seqs[1]: the fact's place in seq order
    valid_at      timestamptz NOT NULL,
    kind          text        NOT NULL,
    source        text        NOT NULL,
    superseded_by text,                 -- NULL: current
    episode_id    text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    -- false until the indexer marks the fact as in the vector index.
    indexed       boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (chat, id)
);
CREATE INDEX facts_order ON facts (chat, first_seq, id);
CREATE INDEX facts_episode ON facts (chat, episode_id);
CREATE INDEX facts_unindexed ON facts (chat, first_seq) WHERE NOT indexed;

CREATE TABLE forgets (
    chat       bigint      NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (chat, seq)
);
