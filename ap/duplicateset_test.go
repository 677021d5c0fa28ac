package ap_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// setPair is one row of testdata/duplicates.tsv (written by
// testdata/dupset, which documents the columns).
type setPair struct {
	line                         int
	form, label, claimed, source string
	refA, refB                   string
	totalA, totalB               intent.Amount
	days                         int
	stateA                       string
}

// readDuplicateSet reads testdata/duplicates.tsv.
func readDuplicateSet(t *testing.T) []setPair {
	t.Helper()
	f, err := os.Open("testdata/duplicates.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []setPair
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		if n == 1 {
			continue // the header
		}
		c := strings.Split(s.Text(), "\t")
		if len(c) != 10 {
			t.Fatalf("duplicates.tsv:%d: %d columns, want 10", n, len(c))
		}
		p := setPair{line: n, form: c[0], label: c[1], claimed: c[2], source: c[3], stateA: c[9]}
		var errs [5]error
		p.refA, errs[0] = strconv.Unquote(c[4])
		p.refB, errs[1] = strconv.Unquote(c[5])
		p.totalA, errs[2] = intent.ParseAmount(c[6], 2)
		p.totalB, errs[3] = intent.ParseAmount(c[7], 2)
		p.days, errs[4] = strconv.Atoi(c[8])
		for _, err := range errs {
			if err != nil {
				t.Fatalf("duplicates.tsv:%d: %v", n, err)
			}
		}
		out = append(out, p)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// payPair enters the pair's bill A, then bill B at the vendor Contoso
// Trading (paid before, a trusted account), and asks the AP pack to pay B
// in full through the gateway; it reports whether the payment was held
// (refused or stepped up), whether it was refused, and the message.
func payPair(t *testing.T, p setPair) (held, refused bool, msg string) {
	e := newEnv(t)
	vendor, iban := e.contoso(false)
	dateB := t0.AddDate(0, 0, -1)
	dateA := dateB.AddDate(0, 0, -p.days)
	switch p.stateA {
	case "paid", "unpaid":
		e.contosoBill("BILL/A", p.refA, p.totalA, dateA, "", p.stateA == "paid")
	case "reversed":
		a := e.contosoBill("BILL/A", p.refA, p.totalA, dateA, "", false)
		v := e.vendor(ap.DemoCompany, vendor)
		if _, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Name: "RBILL/A", Kind: erp.KindCreditNote, Reverses: a.ID,
			Ref: "Reversal of: BILL/A", Vendor: v.ID, Currency: "EUR", Total: p.totalA, Date: dateA.AddDate(0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
	case "other-vendor":
		o, err := e.erp.AddVendor(context.Background(), ap.DemoCompany, erp.Vendor{Name: "Globex Supplies", Active: true, Country: "DE"})
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Name: "BILL/A", Ref: p.refA, Vendor: o.ID, Currency: "EUR",
			Total: p.totalA, Date: dateA, Due: dateA.AddDate(0, 0, 30)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.erp.AddPayment(context.Background(), ap.DemoCompany, erp.Payment{Bill: a.ID, Amount: intent.Money{Currency: "EUR", Amount: p.totalA},
			Date: dateA, Day: dateA.Format(time.DateOnly)}); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("duplicates.tsv:%d: unknown state_a %q", p.line, p.stateA)
	}
	b := e.contosoBill("BILL/B", p.refB, p.totalB, dateB, "", false)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay(vendor, b.Name, iban, intent.FormatAmount(p.totalB, 2)))
	return !d.Executed, !d.Executed && d.Verdict == intent.Deny, message(d)
}

// TestDuplicateSet (issue 24) pays the second bill of every pair of
// testdata/duplicates.tsv through the AP pack's decision path and
// measures the duplicate control on it: recall, the duplicates held (a
// person asked, or refused), and the false-hold rate, the distinct pairs
// held. Every duplicate of a form the control claims (claimed "yes") must
// be held, for the reason of a duplicate; the distinct pairs may be held
// only in the forms heldDistinct names, and only for that reason. The
// numbers are in docs/controls.md ("How well the control finds
// duplicates"); run with -v to see them by form.
func TestDuplicateSet(t *testing.T) {
	t.Parallel()
	pairs := readDuplicateSet(t)
	if len(pairs) < 500 {
		t.Fatalf("%d pairs; the set has at least 500", len(pairs))
	}
	// heldDistinct are the legitimate forms the control holds on purpose,
	// with why; any other distinct pair held is a failure.
	heldDistinct := map[string]string{
		"number-reused-next-year":    "the same number at one vendor is refused once paid: only the accounting team tells a reused number from a copy",
		"weekly-same-amount":         "the same amount within the 7-day window: a person tells two deliveries from one invoice entered twice",
		"instalments-same-day":       "the same amount on the same day",
		"supplement-same-week":       "a number with something added, within the 7-day window, whatever the amounts",
		"digit-appended-same-amount": "the same amount, and one number is the other with a digit a letter may have written (\"2290B\" keys as 22908)",
	}
	type count struct{ n, held, refused int }
	byForm := map[string]*count{}
	var forms []string
	totals := map[string]*count{"duplicate": {}, "claimed": {}, "distinct": {}}
	results := make([]struct {
		held, refused bool
		msg           string
	}, len(pairs))
	t.Run("pairs", func(t *testing.T) {
		for i, p := range pairs {
			t.Run(strconv.Itoa(p.line), func(t *testing.T) {
				t.Parallel()
				results[i].held, results[i].refused, results[i].msg = payPair(t, p)
			})
		}
	})
	for i, p := range pairs {
		held, msg := results[i].held, results[i].msg
		if byForm[p.form] == nil {
			byForm[p.form] = &count{}
			forms = append(forms, p.form)
		}
		for _, c := range []*count{byForm[p.form], totals[p.label], map[bool]*count{true: totals["claimed"]}[p.claimed == "yes"]} {
			if c != nil {
				c.n++
				if held {
					c.held++
				}
				if results[i].refused {
					c.refused++
				}
			}
		}
		dupWhy := strings.Contains(msg, "the same invoice") || strings.Contains(msg, "cannot be compared")
		switch {
		case held && !dupWhy:
			t.Errorf("duplicates.tsv:%d (%s): %q then %q held for another reason than a duplicate: %s", p.line, p.form, p.refA, p.refB, msg)
		case p.claimed == "yes" && !held:
			t.Errorf("duplicates.tsv:%d (%s, a claimed form): %q then %q (%d days apart) paid with nobody asked", p.line, p.form, p.refA, p.refB, p.days)
		case p.label == "distinct" && held && heldDistinct[p.form] == "":
			t.Errorf("duplicates.tsv:%d (%s, distinct): %q then %q held: %s", p.line, p.form, p.refA, p.refB, msg)
		}
	}
	for _, f := range forms {
		t.Logf("%-36s %3d/%3d held (%d refused)", f, byForm[f].held, byForm[f].n, byForm[f].refused)
	}
	d, c, x := totals["duplicate"], totals["claimed"], totals["distinct"]
	t.Logf("recall: %d/%d duplicates held (%.1f%%); claimed forms %d/%d (%.1f%%); false holds: %d/%d distinct pairs (%.1f%%)",
		d.held, d.n, pct(d.held, d.n), c.held, c.n, pct(c.held, c.n), x.held, x.n, pct(x.held, x.n))
	// The false-hold rate docs/controls.md states: the forms of
	// heldDistinct, nothing else.
	const maxFalseHolds = 0.19
	if float64(x.held) > maxFalseHolds*float64(x.n) {
		t.Errorf("false holds %d/%d, above the %.0f%% docs/controls.md states", x.held, x.n, 100*maxFalseHolds)
	}
	if slices.ContainsFunc(pairs, func(p setPair) bool { return p.label != "duplicate" && p.label != "distinct" }) {
		t.Error("a label other than duplicate or distinct")
	}
	// Every source a row names is cited in docs/controls.md by its short
	// name, or is "own" (a legitimate form of a vendor's book) or
	// "issue24" (found by the trial).
	doc, err := os.ReadFile("../docs/controls.md")
	if err != nil {
		t.Fatal(err)
	}
	// docs/controls.md reports the numbers measured here.
	for _, want := range []string{
		fmt.Sprintf("| duplicates in the forms the control claims | %d | **%d (recall %.0f%%)** |", c.n, c.held, pct(c.held, c.n)),
		fmt.Sprintf("| all duplicates | %d | %d (recall %.1f%%) |", d.n, d.held, pct(d.held, d.n)),
		fmt.Sprintf("| distinct pairs | %d | **%d (false-hold rate %.1f%%)** |", x.n, x.held, pct(x.held, x.n)),
		fmt.Sprintf("`ap/testdata/duplicates.tsv`, %d pairs of bills", len(pairs)),
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/controls.md does not report %q", want)
		}
	}
	for _, p := range pairs {
		for src := range strings.SplitSeq(p.source, ",") {
			if src != "own" && src != "issue24" && !strings.Contains(string(doc), "["+src+"]") {
				t.Errorf("duplicates.tsv:%d: source %q is not cited in docs/controls.md", p.line, src)
			}
		}
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
