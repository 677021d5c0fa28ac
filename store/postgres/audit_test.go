package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
	"github.com/intentplane/intentplane/store/storetest"
)

// chainLines returns n linked receipts of owner (storetest.AuditDraft's),
// as the receipts table holds them: seq, hash and line.
func chainLines(owner intent.Owner, n int) (rows [][]any, head receipt.Receipt, err error) {
	var prev *receipt.Receipt
	var buf bytes.Buffer
	for i := range n {
		r, err := receipt.Link(storetest.AuditDraft(owner, i), prev)
		if err != nil {
			return nil, head, err
		}
		buf.Reset()
		if err := receipt.WriteJSONL(&buf, []receipt.Receipt{r}); err != nil {
			return nil, head, err
		}
		rows = append(rows, []any{string(owner), int64(r.Seq), r.Hash[:], strings.TrimSuffix(buf.String(), "\n")})
		head = r
		prev = &head
	}
	return rows, head, nil
}

// load writes n receipts per owner straight into the schema of conn with
// COPY (the store's own appends would take minutes for a million), and
// analyzes the tables.
func load(ctx context.Context, conn *pgx.Conn, owners []intent.Owner, n int) error {
	for _, o := range owners {
		rows, head, err := chainLines(o, n)
		if err != nil {
			return err
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"receipts"}, []string{"owner", "seq", "hash", "line"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `INSERT INTO receipt_heads (owner, seq, hash) VALUES ($1, $2, $3)`, string(o), int64(head.Seq), head.Hash[:]); err != nil {
			return err
		}
	}
	_, err := conn.Exec(ctx, `ANALYZE receipts; ANALYZE receipt_values`)
	return err
}

// auditOwners are the owners of the loaded receipts.
func auditOwners(n int) []intent.Owner {
	out := make([]intent.Owner, n)
	for i := range out {
		out[i] = intent.Owner(fmt.Sprintf("agent-%02d", i))
	}
	return out
}

// planOf returns the plan PostgreSQL chooses for query (EXPLAIN, text).
func planOf(ctx context.Context, conn *pgx.Conn, query string, args ...any) (string, error) {
	rows, err := conn.Query(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// auditQueries are the pages the plans and benchmarks read.
func auditQueries() []struct {
	name string
	q    state.ReceiptQuery
} {
	params := []string{"vendor"}
	return []struct {
		name string
		q    state.ReceiptQuery
	}{
		{"first", state.ReceiptQuery{}},
		{"verdict", state.ReceiptQuery{Verdict: "step_up"}},
		{"result", state.ReceiptQuery{Result: receipt.ResultExecuted}},
		{"payee", state.ReceiptQuery{Payee: "V-3", PayeeParams: params}},
		{"one owner", state.ReceiptQuery{Owners: []intent.Owner{"agent-01"}}},
		{"two owners", state.ReceiptQuery{Owners: []intent.Owner{"agent-01", "agent-02"}}},
		{"payee and verdict", state.ReceiptQuery{Payee: "V-3", PayeeParams: params, Verdict: "allow"}},
		{"payee of one owner", state.ReceiptQuery{Payee: "V-3", PayeeParams: params, Owners: []intent.Owner{"agent-02"}}},
		{"verdict of one owner", state.ReceiptQuery{Verdict: "deny", Owners: []intent.Owner{"agent-02"}}},
		{"time range", state.ReceiptQuery{From: storetest.AuditDraft("", 300).Time, To: storetest.AuditDraft("", 9000).Time}},
	}
}

// checkPlan fails unless plan reads an index in order: no sequential
// scan and no sort of what it read.
func checkPlan(plan string) error {
	if strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Sort") || !strings.Contains(plan, "Index") {
		return fmt.Errorf("not an ordered index scan:\n%s", plan)
	}
	return nil
}

// TestAuditPlans: with 40,000 receipts, every page query, first, deep
// (2,000 receipts in) and back from there, is an index scan in order,
// stopped by its limit: no sequential scan, no sort.
func TestAuditPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, dsn := open(t, postgres.Config{})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := load(ctx, conn, auditOwners(4), 10000); err != nil {
		t.Fatal(err)
	}
	for _, tc := range auditQueries() {
		deep, err := deepCursor(ctx, s, tc.q, 2000)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back := tc.q
		if back.Cursor, err = prevOf(ctx, s, deep); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, c := range []struct {
			name string
			q    state.ReceiptQuery
		}{{"first page", tc.q}, {"deep page", deep}, {"deep page backwards", back}} {
			sql, args, err := postgres.PageQuery(c.q)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := planOf(ctx, conn, sql, args...)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkPlan(plan); err != nil {
				t.Errorf("%s, %s: %v", tc.name, c.name, err)
			}
		}
	}
}

// deepCursor returns q with the cursor of the page that starts after the
// newest n receipts q selects, or the deepest page there is when q
// selects fewer (read a page of up to MaxPageSize at a time).
func deepCursor(ctx context.Context, s state.ReceiptIndex, q state.ReceiptQuery, n int) (state.ReceiptQuery, error) {
	big := q
	big.Limit = min(n, state.MaxPageSize)
	for read := 0; read < n; {
		p, err := s.Page(ctx, big)
		if err != nil {
			return q, err
		}
		if p.Next == "" {
			break
		}
		read += len(p.Receipts)
		big.Cursor = p.Next
	}
	if big.Cursor == "" {
		return q, fmt.Errorf("%+v selects a single page", q)
	}
	q.Cursor = big.Cursor
	return q, nil
}

// prevOf returns the Prev cursor of q's page.
func prevOf(ctx context.Context, s state.ReceiptIndex, q state.ReceiptQuery) (string, error) {
	p, err := s.Page(ctx, q)
	if err == nil && p.Prev == "" {
		err = fmt.Errorf("page has no Prev")
	}
	return p.Prev, err
}

// TestAuditUpgrade: a database at schema version 7 (before the receipt
// index) with receipts is migrated by Open, and its receipts are found by
// Page, filters and all, as are receipts appended after.
func TestAuditUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := pgtest.Schema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names[:7] {
		b, err := os.ReadFile("migrations/" + n.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(b)); err != nil {
			t.Fatalf("%s: %v", n.Name(), err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, i+1, strings.TrimSuffix(n.Name(), ".sql")); err != nil {
			t.Fatal(err)
		}
	}
	// What a version 7 gateway wrote: receipts appended with
	// intentplane_append.
	for _, o := range []intent.Owner{"emma", "noah"} {
		rows, _, err := chainLines(o, 40)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		var hashes [][]byte
		var lines []string
		for _, r := range rows {
			seqs, hashes, lines = append(seqs, r[1].(int64)), append(hashes, r[2].([]byte)), append(lines, r[3].(string))
		}
		var done bool
		if err := conn.QueryRow(ctx, `SELECT o_done FROM intentplane_append($1, 0, NULL, $2, $3, $4)`, string(o), seqs, hashes, lines).Scan(&done); err != nil || !done {
			t.Fatalf("append at version 7: %v, %v", done, err)
		}
	}
	s, err := postgres.Open(ctx, dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Append(ctx, storetest.AuditDraft("emma", 42)) // allow, V-0
	if err != nil {
		t.Fatal(err)
	}
	q := state.ReceiptQuery{Payee: "V-0", PayeeParams: []string{"vendor"}, Verdict: "allow", Limit: 3}
	var got []auditKey
	for {
		p, err := s.Page(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Receipts {
			got = append(got, auditKey{r.Owner, r.Seq})
		}
		if q.Cursor = p.Next; q.Cursor == "" {
			break
		}
	}
	// AuditDraft i is allow with vendor V-0 when i%21 == 0, resolved
	// unless i%11 == 10 (21 is not): receipt 1 of each owner, and emma's
	// new one, the newest.
	want := []auditKey{{"emma", r.Seq}, {"noah", 1}, {"emma", 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("after the upgrade, pages hold %v, want %v", got, want)
	}
}

type auditKey struct {
	Owner intent.Owner
	Seq   uint64
}
