-- contextd embedded schema, version 4: facts (issue 19) and forgetting one
-- message (issue 22).
--
-- A deleted message stays as a tombstone (deleted = 1, no content, name or
-- metadata) so that seqs stay gap-free. What was derived from it is marked,
-- in the same transaction, and rebuilt from the marks by background work:
-- chats.summary_dirty and episodes.rebuild are 0 when clean, otherwise a
-- counter each deletion bumps, so that a rebuild that read an older mark
-- does not clear a newer one; forgets lists the turns whose vectors and
-- profile items must still go.

ALTER TABLE chats ADD COLUMN summary_dirty INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX messages_deleted ON messages (chat, seq) WHERE deleted = 1;
ALTER TABLE episodes ADD COLUMN rebuild INTEGER NOT NULL DEFAULT 0;
CREATE INDEX episodes_rebuild ON episodes (chat, from_seq) WHERE rebuild > 0;

CREATE TABLE facts (
    chat          INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    id            TEXT    NOT NULL,
    text          TEXT    NOT NULL,
    seqs          TEXT    NOT NULL, -- JSON array of the source seqs, ascending
    first_seq     INTEGER NOT NULL, -- seqs[0]: the fact's place in seq order
    valid_at      INTEGER NOT NULL,
    kind          TEXT    NOT NULL,
    source        TEXT    NOT NULL,
    superseded_by TEXT,             -- NULL: current
    episode_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    -- 0 until the indexer marks the fact as in the vector index.
    indexed       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (chat, id)
);
CREATE INDEX facts_order ON facts (chat, first_seq, id);
CREATE INDEX facts_episode ON facts (chat, episode_id);
CREATE INDEX facts_unindexed ON facts (chat, first_seq) WHERE indexed = 0;

CREATE TABLE forgets (
    chat       INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (chat, seq)
);
