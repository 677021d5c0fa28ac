-- Fewer round trips per decision (issue 26).
--
-- intentplane_ledger_usage runs intentplane_ledger and returns, with its
-- codes, the account's committed and reserved amounts after the batch (the
-- row is still locked by the call's transaction), so that a reservation on
-- a running total and the read of that total take one round trip.
CREATE FUNCTION intentplane_ledger_usage(p_account bytea, p_ops text[], p_ids bytea[], p_currencies text[], p_limits bigint[], p_amounts bigint[],
    OUT o_codes int[], OUT o_committed bigint, OUT o_reserved bigint)
LANGUAGE plpgsql AS $$
BEGIN
    o_codes := intentplane_ledger(p_account, p_ops, p_ids, p_currencies, p_limits, p_amounts);
    SELECT a.committed, a.reserved INTO o_committed, o_reserved
      FROM budget_accounts a WHERE a.account = p_account;
END
$$;

-- intentplane_append appends receipts to an owner's chain if its head is
-- still (p_prev_seq, p_prev_hash), seq 0 meaning an empty chain (or none):
-- it inserts them, moves the head to the last one and returns true with
-- that head. Otherwise it writes nothing and returns false with the head as
-- committed now (seq 0 for an owner without receipts), for the caller to
-- link the receipts again. The head row is locked only by the update that
-- moves it, so the lock is held for one statement and its commit, not
-- across round trips; a head that moved is read after the update waited
-- for the transaction that moved it (each statement of a function takes a
-- new snapshot), so the caller's next attempt links after it.
CREATE FUNCTION intentplane_append(p_owner text, p_prev_seq bigint, p_prev_hash bytea, p_seqs bigint[], p_hashes bytea[], p_lines text[],
    OUT o_done bool, OUT o_seq bigint, OUT o_hash bytea)
LANGUAGE plpgsql AS $$
DECLARE
    v_n int := array_length(p_seqs, 1);
BEGIN
    UPDATE receipt_heads h SET seq = p_seqs[v_n], hash = p_hashes[v_n]
     WHERE h.owner = p_owner AND h.seq = p_prev_seq AND (p_prev_seq = 0 OR h.hash = p_prev_hash);
    IF NOT FOUND AND p_prev_seq = 0 THEN
        INSERT INTO receipt_heads (owner, seq, hash) VALUES (p_owner, p_seqs[v_n], p_hashes[v_n])
            ON CONFLICT (owner) DO NOTHING;
    END IF;
    IF FOUND THEN
        INSERT INTO receipts (owner, seq, hash, line)
        SELECT p_owner, t.seq, t.hash, t.line FROM unnest(p_seqs, p_hashes, p_lines) AS t(seq, hash, line);
        o_done := true;
        o_seq := p_seqs[v_n];
        o_hash := p_hashes[v_n];
        RETURN;
    END IF;
    o_done := false;
    SELECT h.seq, h.hash INTO o_seq, o_hash FROM receipt_heads h WHERE h.owner = p_owner;
    IF NOT FOUND THEN
        o_seq := 0;
        o_hash := '';
    END IF;
END
$$;

-- intentplane_ledger_many applies commits and releases on several
-- accounts in one statement: p_accounts must be sorted, so that two calls
-- lock the rows they share in the same order; each run of one account is
-- passed to intentplane_ledger. It returns a code per operation, in order.
CREATE FUNCTION intentplane_ledger_many(p_accounts bytea[], p_ops text[], p_ids bytea[])
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    v_codes int[] := '{}';
    v_n     int := coalesce(array_length(p_accounts, 1), 0);
    i       int := 1;
    j       int;
BEGIN
    WHILE i <= v_n LOOP
        j := i;
        WHILE j < v_n AND p_accounts[j + 1] = p_accounts[i] LOOP
            j := j + 1;
        END LOOP;
        IF EXISTS (SELECT 1 FROM unnest(p_ops[i:j]) AS o WHERE o NOT IN ('commit', 'release')) THEN
            RAISE EXCEPTION 'intentplane_ledger_many: only commit and release';
        END IF;
        v_codes := v_codes || intentplane_ledger(p_accounts[i], p_ops[i:j], p_ids[i:j],
            array_fill(NULL::text, ARRAY[j - i + 1]), array_fill(0::bigint, ARRAY[j - i + 1]), array_fill(0::bigint, ARRAY[j - i + 1]));
        i := j + 1;
    END LOOP;
    RETURN v_codes;
END
$$;

-- intentplane_reserve_many makes reservations on several accounts in one
-- statement (an operation's running totals): p_accounts must be sorted, as
-- for intentplane_ledger_many; each run of one account is passed to
-- intentplane_ledger. It returns a code per reservation, in order, and the
-- account's committed and reserved amounts after its run.
CREATE FUNCTION intentplane_reserve_many(p_accounts bytea[], p_ids bytea[], p_currencies text[], p_limits bigint[], p_amounts bigint[],
    OUT o_codes int[], OUT o_committed bigint[], OUT o_reserved bigint[])
LANGUAGE plpgsql AS $$
DECLARE
    v_n int := coalesce(array_length(p_accounts, 1), 0);
    v_c bigint;
    v_r bigint;
    i   int := 1;
    j   int;
BEGIN
    o_codes := '{}';
    o_committed := '{}';
    o_reserved := '{}';
    WHILE i <= v_n LOOP
        j := i;
        WHILE j < v_n AND p_accounts[j + 1] = p_accounts[i] LOOP
            j := j + 1;
        END LOOP;
        o_codes := o_codes || intentplane_ledger(p_accounts[i], array_fill('reserve'::text, ARRAY[j - i + 1]), p_ids[i:j],
            p_currencies[i:j], p_limits[i:j], p_amounts[i:j]);
        SELECT a.committed, a.reserved INTO v_c, v_r FROM budget_accounts a WHERE a.account = p_accounts[i];
        o_committed := o_committed || array_fill(coalesce(v_c, 0), ARRAY[j - i + 1]);
        o_reserved := o_reserved || array_fill(coalesce(v_r, 0), ARRAY[j - i + 1]);
        i := j + 1;
    END LOOP;
END
$$;
