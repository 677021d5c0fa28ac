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

-- intentplane_reserve holds p_amount on p_account under p_id if committed +
-- reserved + p_amount <= p_limit, in one transaction. It returns 0 when
-- reserved, 1 when the limit would be exceeded, 2 when the account was
-- opened in another currency, 3 when p_id is already reserved. The UPDATE's
-- condition is re-checked on the locked row, so concurrent reservations of
-- one account are serialized by its row lock.
CREATE FUNCTION intentplane_reserve(p_account text, p_currency text, p_limit bigint, p_id text, p_amount bigint)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_currency text;
BEGIN
    INSERT INTO budget_reservations (id, account, amount) VALUES (p_id, p_account, p_amount)
        ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        RETURN 3;
    END IF;
    UPDATE budget_accounts SET reserved = reserved + p_amount
     WHERE account = p_account AND currency = p_currency AND p_limit - committed - reserved >= p_amount;
    IF FOUND THEN
        RETURN 0;
    END IF;
    SELECT currency INTO v_currency FROM budget_accounts WHERE account = p_account;
    IF NOT FOUND THEN
        INSERT INTO budget_accounts (account, currency) VALUES (p_account, p_currency)
            ON CONFLICT (account) DO NOTHING;
        UPDATE budget_accounts SET reserved = reserved + p_amount
         WHERE account = p_account AND currency = p_currency AND p_limit - committed - reserved >= p_amount;
        IF FOUND THEN
            RETURN 0;
        END IF;
        SELECT currency INTO v_currency FROM budget_accounts WHERE account = p_account;
    END IF;
    DELETE FROM budget_reservations WHERE id = p_id;
    IF v_currency <> p_currency THEN
        RETURN 2;
    END IF;
    RETURN 1;
END
$$;
