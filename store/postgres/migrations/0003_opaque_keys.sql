-- Store keys are opaque bytes (core/state): an account, a reservation id or
-- a single-use key may hold NUL and bytes that are not UTF-8, which a text
-- column refuses. Those columns become bytea; existing keys keep their
-- UTF-8 bytes. Record locks get their own table.

ALTER TABLE consumed_keys ALTER COLUMN key TYPE bytea USING convert_to(key, 'UTF8');
ALTER TABLE budget_accounts ALTER COLUMN account TYPE bytea USING convert_to(account, 'UTF8');
ALTER TABLE budget_reservations ALTER COLUMN id TYPE bytea USING convert_to(id, 'UTF8');
ALTER TABLE budget_reservations ALTER COLUMN account TYPE bytea USING convert_to(account, 'UTF8');

-- A record held by holder until expires; an expired hold may be taken over.
CREATE TABLE record_locks (
    key     bytea       PRIMARY KEY,
    holder  bytea       NOT NULL,
    expires timestamptz NOT NULL
);

-- intentplane_ledger, as in 0002, over bytea accounts and reservation ids.
DROP FUNCTION intentplane_ledger(text, text[], text[], text[], bigint[], bigint[]);
CREATE FUNCTION intentplane_ledger(p_account bytea, p_ops text[], p_ids bytea[], p_currencies text[], p_limits bigint[], p_amounts bigint[])
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    v_currency  text;
    v_limit     bigint;
    v_committed bigint;
    v_reserved  bigint;
    v_amount    bigint;
    v_changed   bool := false;
    v_codes     int[] := '{}';
    v_first     int;
BEGIN
    SELECT currency, budget_limit, committed, reserved INTO v_currency, v_limit, v_committed, v_reserved
      FROM budget_accounts WHERE account = p_account FOR UPDATE;
    IF NOT FOUND THEN
        v_first := array_position(p_ops, 'reserve');
        IF v_first IS NOT NULL THEN
            INSERT INTO budget_accounts (account, currency) VALUES (p_account, p_currencies[v_first])
                ON CONFLICT (account) DO NOTHING;
            SELECT currency, budget_limit, committed, reserved INTO v_currency, v_limit, v_committed, v_reserved
              FROM budget_accounts WHERE account = p_account FOR UPDATE;
        END IF;
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_ops, 1), 0) LOOP
        IF p_ops[i] = 'reserve' THEN
            INSERT INTO budget_reservations (id, account, amount) VALUES (p_ids[i], p_account, p_amounts[i])
                ON CONFLICT (id) DO NOTHING;
            IF NOT FOUND THEN
                v_codes := v_codes || 3;
            ELSIF v_currency IS DISTINCT FROM p_currencies[i] THEN
                DELETE FROM budget_reservations WHERE id = p_ids[i];
                v_codes := v_codes || 2;
            ELSIF v_limit IS NOT NULL AND v_limit <> p_limits[i] THEN
                DELETE FROM budget_reservations WHERE id = p_ids[i];
                v_codes := v_codes || 5;
            ELSIF p_limits[i] - v_committed - v_reserved < p_amounts[i] THEN
                DELETE FROM budget_reservations WHERE id = p_ids[i];
                v_codes := v_codes || 1;
            ELSE
                v_limit := p_limits[i];
                v_reserved := v_reserved + p_amounts[i];
                v_changed := true;
                v_codes := v_codes || 0;
            END IF;
        ELSIF p_ops[i] IN ('commit', 'release') THEN
            DELETE FROM budget_reservations WHERE id = p_ids[i] AND account = p_account
                RETURNING amount INTO v_amount;
            IF NOT FOUND THEN
                v_codes := v_codes || 4;
            ELSE
                v_reserved := v_reserved - v_amount;
                IF p_ops[i] = 'commit' THEN
                    v_committed := v_committed + v_amount;
                END IF;
                v_changed := true;
                v_codes := v_codes || 0;
            END IF;
        ELSE
            RAISE EXCEPTION 'intentplane_ledger: unknown operation %', p_ops[i];
        END IF;
    END LOOP;
    IF v_changed THEN
        UPDATE budget_accounts SET committed = v_committed, reserved = v_reserved, budget_limit = v_limit
         WHERE account = p_account;
    END IF;
    RETURN v_codes;
END
$$;
