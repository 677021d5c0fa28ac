package banking_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/intent"
)

// TestSplitNeedsTheLevelOfTheWhole: splitting a transfer never lowers the
// approval it needs (issue 13). 6,000.00 at once needs four eyes, and so
// does the second of two 3,000.00; 999.99 needs nothing, the second and
// third of three need a confirmation, and each step-up shows what was
// already sent to the recipient.
func TestSplitNeedsTheLevelOfTheWhole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		parts  []string
		levels []intent.Level // asked for each part ("" none)
	}{
		{"whole", []string{"6000.00"}, []intent.Level{intent.LevelFourEyes}},
		{"2x3000", []string{"3000.00", "3000.00"}, []intent.Level{intent.LevelConfirm, intent.LevelFourEyes}},
		{"3x999.99", []string{"999.99", "999.99", "999.99"}, []intent.Level{"", intent.LevelConfirm, intent.LevelConfirm}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tok, id := f.mandate(payMandate(10000000))
			sent := intent.Amount(0)
			for i, part := range c.parts {
				p := send(friend, part, fmt.Sprintf("Car, part %d", i+1))
				d := f.decide(tok, p)
				want := c.levels[i]
				switch {
				case want == "" && !d.Executed:
					t.Fatalf("part %d (%s): %s %s %+v", i+1, part, d.Verdict, d.Level, d.Refusal)
				case want != "" && (d.Verdict != intent.StepUp || d.Level != want):
					t.Fatalf("part %d (%s): %s %s, want a step-up to %s: %+v", i+1, part, d.Verdict, d.Level, want, d.Refusal)
				}
				if got := d.Facts[banking.TotalDay].Int; got != int64(sent) {
					t.Errorf("part %d: paid_today %d, want %d", i+1, got, sent)
				}
				if want != "" && sent > 0 {
					shown := fmt.Sprintf("this payment %s EUR; paid to %s today %s EUR", part, friend, intent.FormatAmount(sent, 2))
					if !strings.Contains(d.Refusal.Message, shown) {
						t.Errorf("part %d: the step-up does not show %q: %s", i+1, shown, d.Refusal.Message)
					}
				}
				if want == intent.LevelConfirm {
					if d = f.decide(tok, p, f.approve(d, id)); !d.Executed {
						t.Fatalf("part %d confirmed: %s %+v", i+1, d.Verdict, d.Refusal)
					}
				}
				if d.Executed {
					a, _ := intent.ParseAmount(part, 2)
					sent += a
				}
			}
		})
	}
}

// TestSplitAboveTenThousand: the 10,000.00 limit applies to what is sent
// to one recipient in a day too; other recipients have totals of their
// own.
func TestSplitAboveTenThousand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, id := f.mandate(payMandate(10000000))
	first := send(friend, "900.00", "Rent, part 1")
	if d := f.decide(tok, first); !d.Executed {
		t.Fatalf("first: %s %+v", d.Verdict, d.Refusal)
	}
	d := f.decide(tok, send(friend, "9100.01", "Rent, part 2"))
	if code(d) != intent.CodePolicyDenied || !strings.Contains(d.Refusal.Message, "10,000.00") {
		t.Fatalf("second above 10,000.00 in all: %s %+v", d.Verdict, d.Refusal)
	}
	d = f.decide(tok, send(friend, "100.01", "Rent, part 2"))
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm {
		t.Fatalf("100.01 after 900.00: %s %s %+v", d.Verdict, d.Level, d.Refusal)
	}
	if d = f.decide(tok, send(friend, "100.01", "Rent, part 2"), f.approve(d, id)); !d.Executed {
		t.Fatalf("confirmed: %s %+v", d.Verdict, d.Refusal)
	}
}
