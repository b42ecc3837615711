-- contextd embedded schema, version 3: user profiles (issue 11). A profile
-- is one JSON document per (tenant, user), versioned for compare-and-swap;
-- profile_merged records how far each chat's summary is in its user's
-- profile, so the work left is derived from stored state and survives a
-- crash. Both go with their chat or user.

CREATE TABLE profiles (
    tenant     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    state      TEXT    NOT NULL, -- JSON of memory.ProfileState
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, user_id)
);

CREATE TABLE profile_merged (
    chat      INTEGER PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
    merged_to INTEGER NOT NULL
);
