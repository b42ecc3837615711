-- contextd PostgreSQL schema, version 3: user profiles (issue 11). One
-- versioned JSON document per (tenant, user); profile_merged records how far
-- each chat's summary is in its user's profile (the work left is derived
-- from stored state).

CREATE TABLE profiles (
    tenant     text        NOT NULL,
    user_id    text        NOT NULL,
    state      jsonb       NOT NULL,
    version    bigint      NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, user_id)
);

CREATE TABLE profile_merged (
    chat      bigint PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
    merged_to bigint NOT NULL
);
