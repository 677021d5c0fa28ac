-- state.Records: small values that outlive a process (the mandate
-- intentplane-mcp issued at start), under opaque keys, until they expire.

CREATE TABLE records (
    key     bytea PRIMARY KEY,
    value   bytea NOT NULL,
    expires timestamptz NOT NULL
);
