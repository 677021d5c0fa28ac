-- intentplane state: budget ledger, single-use keys, receipt chains and
-- checkpoints. Amounts are integer minor units; receipts and checkpoints are
-- stored as their canonical JSON line (core/receipt's JSONL export), the
-- bytes their hash covers being recomputable from it.

CREATE TABLE budget_accounts (
    account   text   PRIMARY KEY,
    currency  text   NOT NULL,
    committed bigint NOT NULL DEFAULT 0 CHECK (committed >= 0),
    reserved  bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0)
);

CREATE TABLE budget_reservations (
    id      text   PRIMARY KEY,
    account text   NOT NULL,
    amount  bigint NOT NULL CHECK (amount >= 0)
);

CREATE TABLE consumed_keys (
    key     text        PRIMARY KEY,
    expires timestamptz NOT NULL
);

CREATE TABLE receipt_heads (
    owner text   PRIMARY KEY,
    seq   bigint NOT NULL CHECK (seq >= 0),
    hash  bytea  NOT NULL
);

CREATE TABLE receipts (
    owner text   NOT NULL,
    seq   bigint NOT NULL CHECK (seq >= 1),
    hash  bytea  NOT NULL,
    line  text   NOT NULL,
    PRIMARY KEY (owner, seq)
);

CREATE TABLE receipt_checkpoints (
    owner  text   NOT NULL,
    seq    bigint NOT NULL,
    key_id text   NOT NULL,
    line   text   NOT NULL,
    PRIMARY KEY (owner, seq, key_id)
);

-- intentplane_ledger applies a batch of operations on one account's
-- reservations, in order, under the account row's lock, and returns a code
-- per operation. p_ops[i] is 'reserve' (hold p_amounts[i] of
-- p_currencies[i] under p_ids[i] if committed + reserved + amount <=
-- p_limits[i]), 'commit' (turn reservation p_ids[i] into spending) or
-- 'release' (drop it). Codes: 0 done, 1 limit exceeded, 2 the account was
-- opened in another currency, 3 the reservation id exists, 4 no open
-- reservation of this account has the id. A new account is opened in the
-- currency of the batch's first reservation.
CREATE FUNCTION intentplane_ledger(p_account text, p_ops text[], p_ids text[], p_currencies text[], p_limits bigint[], p_amounts bigint[])
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    v_currency  text;
    v_committed bigint;
    v_reserved  bigint;
    v_amount    bigint;
    v_changed   bool := false;
    v_codes     int[] := '{}';
    v_first     int;
BEGIN
    SELECT currency, committed, reserved INTO v_currency, v_committed, v_reserved
      FROM budget_accounts WHERE account = p_account FOR UPDATE;
    IF NOT FOUND THEN
        v_first := array_position(p_ops, 'reserve');
        IF v_first IS NOT NULL THEN
            INSERT INTO budget_accounts (account, currency) VALUES (p_account, p_currencies[v_first])
                ON CONFLICT (account) DO NOTHING;
            SELECT currency, committed, reserved INTO v_currency, v_committed, v_reserved
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
            ELSIF p_limits[i] - v_committed - v_reserved < p_amounts[i] THEN
                DELETE FROM budget_reservations WHERE id = p_ids[i];
                v_codes := v_codes || 1;
            ELSE
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
        UPDATE budget_accounts SET committed = v_committed, reserved = v_reserved WHERE account = p_account;
    END IF;
    RETURN v_codes;
END
$$;
