-- When each reservation was made, by the database's clock, so that
-- reconciliation (gateway.Reconcile) settles only reservations older than
-- any decision still in flight on another replica. Rows that exist already
-- take the time of this migration.

ALTER TABLE budget_reservations ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX budget_reservations_created_at ON budget_reservations (created_at);
