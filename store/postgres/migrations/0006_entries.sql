-- approvals.Store: the approval page's requests, sessions and recorded
-- call-backs, by space and opaque key, until they expire.

CREATE TABLE entries (
    space   bytea NOT NULL,
    key     bytea NOT NULL,
    value   bytea NOT NULL,
    expires timestamptz NOT NULL,
    PRIMARY KEY (space, key)
);
