-- Receipts are read a page at a time, newest first, by owner, time range,
-- verdict, result and resolved payee (issue 26: the audit view read whole
-- chains on every page load).
--
-- The order is (at, owner COLLATE "C", seq): at is the receipt's canonical
-- time text (intent.TimeFormat, UTC with nine fraction digits: it sorts as
-- the times do), owners compare bytewise as Go compares them. verdict,
-- result and at are generated from the stored line, so that neither
-- intentplane_append nor any other writer changes, and adding them here
-- computes them for the receipts already stored (the table is rewritten
-- once, under this migration's lock).
ALTER TABLE receipts
    ADD COLUMN at      text COLLATE "C" GENERATED ALWAYS AS (line::jsonb ->> 'time') STORED,
    ADD COLUMN verdict text GENERATED ALWAYS AS (line::jsonb ->> 'decision') STORED,
    ADD COLUMN result  text GENERATED ALWAYS AS (line::jsonb ->> 'result') STORED;

CREATE INDEX receipts_at ON receipts (at, (owner COLLATE "C"), seq);
CREATE INDEX receipts_owner_at ON receipts (owner, at, seq);
CREATE INDEX receipts_verdict_at ON receipts (verdict, at, (owner COLLATE "C"), seq);
CREATE INDEX receipts_result_at ON receipts (result, at, (owner COLLATE "C"), seq);

-- receipt_values holds each receipt's resolved values (the trusted value
-- of each critical parameter, such as the vendor on file), one row per
-- distinct value with the parameters that resolved to it, in the
-- receipts' order behind the value: a payee's page is an index range.
CREATE TABLE receipt_values (
    value  text   NOT NULL,
    at     text   COLLATE "C" NOT NULL,
    owner  text   NOT NULL,
    seq    bigint NOT NULL,
    params text[] NOT NULL
);
CREATE UNIQUE INDEX receipt_values_order ON receipt_values (value, at, (owner COLLATE "C"), seq);

-- intentplane_receipt_values fills receipt_values from the receipts a
-- statement inserted, whichever statement it was.
CREATE FUNCTION intentplane_receipt_values() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO receipt_values (value, at, owner, seq, params)
    SELECT e ->> 'value', n.at, n.owner, n.seq, array_agg(DISTINCT e ->> 'param')
      FROM new_receipts n, jsonb_array_elements(n.line::jsonb -> 'resolved') AS e
     WHERE coalesce(e ->> 'value', '') <> ''
     GROUP BY e ->> 'value', n.at, n.owner, n.seq;
    RETURN NULL;
END
$$;

CREATE TRIGGER receipts_values AFTER INSERT ON receipts
    REFERENCING NEW TABLE AS new_receipts
    FOR EACH STATEMENT EXECUTE FUNCTION intentplane_receipt_values();

INSERT INTO receipt_values (value, at, owner, seq, params)
SELECT e ->> 'value', r.at, r.owner, r.seq, array_agg(DISTINCT e ->> 'param')
  FROM receipts r, jsonb_array_elements(r.line::jsonb -> 'resolved') AS e
 WHERE coalesce(e ->> 'value', '') <> ''
 GROUP BY e ->> 'value', r.at, r.owner, r.seq;
