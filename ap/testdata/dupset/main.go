// Command dupset writes ap/testdata/duplicates.tsv, the labelled set of
// pairs of vendor bills that TestDuplicateSet pays through the AP pack
// (issue 24; docs/controls.md, "How well the control finds duplicates").
//
//	go run ./ap/testdata/dupset > ap/testdata/duplicates.tsv
//
// Each row is one pair: bill A, entered first, and bill B, whose payment
// the test asks for. The label is the ground truth the pair was built
// from, never what the control decides: "duplicate" when B is A's invoice
// entered again in a form that public AP-audit guidance describes (the
// source column names it, see sourcesDoc), "distinct" when B is another
// invoice that looks like A in a way a legitimate book does. claimed is
// "yes" for the duplicate forms the control is meant to catch (the test
// requires all of them held) and "no" for forms it is known to miss.
//
// The set is generated, deterministically (a fixed seed), so that every
// form has many numbers, amounts and date gaps; the forms and their
// labels are written by hand below. All data is fictional.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// pair is one row.
type pair struct {
	form, label, claimed, source string
	refA, refB                   string
	totalA, totalB               int64 // cents
	days                         int   // B's invoice date less A's, in days
	stateA                       string
}

// The states of bill A: paid in full before B arrives; unpaid; reversed
// in full by a credit note (Odoo's correction of a posted bill); or a
// bill of another vendor (B is then the vendor's own first such bill).
const (
	paid     = "paid"
	unpaid   = "unpaid"
	reversed = "reversed"
	other    = "other-vendor"
)

type gen struct {
	r   *rand.Rand
	out []pair
}

func (g *gen) num() int      { return 1000 + g.r.IntN(89000) }
func (g *gen) amount() int64 { return int64(5000 + g.r.IntN(43000)) }
func (g *gen) between(lo, hi int) int {
	return lo + g.r.IntN(hi-lo+1)
}
func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// otherAmount returns an amount more than 3% away from a.
func (g *gen) otherAmount(a int64) int64 {
	for {
		b := g.amount()
		if d := b - a; d*100 > 3*a || -d*100 > 3*a {
			return b
		}
	}
}

// cent returns a changed by one cent, up or down.
func (g *gen) cent(a int64) int64 {
	if g.r.IntN(2) == 0 {
		return a + 1
	}
	return a - 1
}

func (g *gen) add(n int, form, label, claimed, source string, f func(p *pair)) {
	for range n {
		p := pair{form: form, label: label, claimed: claimed, source: source, stateA: paid}
		p.totalA = g.amount()
		p.totalB = p.totalA
		f(&p)
		g.out = append(g.out, p)
	}
}

// prefixed writes the number n as a vendor might print it.
func (g *gen) prefixed(n int) string {
	return g.pick("INV-", "INV ", "", "Invoice ", "RE-", "F-") + strconv.Itoa(n)
}

// grouped writes n (at least 1000) with thousands grouping by sep.
func grouped(n int, sep string) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ocr replaces one confusable digit of s (0 1 2 5 8) by a letter a scanner
// or a typist puts for it; ok is false when s has none.
func (g *gen) ocr(s string) (string, bool) {
	swaps := map[byte][]string{'0': {"O", "o"}, '1': {"I", "l"}, '2': {"Z"}, '5': {"S"}, '8': {"B"}}
	var at []int
	for i := 0; i < len(s); i++ {
		if swaps[s[i]] != nil {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return s, false
	}
	i := at[g.r.IntN(len(at))]
	return s[:i] + g.pick(swaps[s[i]]...) + s[i+1:], true
}

// transposed swaps two adjacent different digits of the number n.
func (g *gen) transposed(n int) int {
	s := []byte(strconv.Itoa(n))
	for {
		i := g.r.IntN(len(s) - 1)
		if s[i] != s[i+1] && !(i == 0 && s[1] == '0') {
			s[i], s[i+1] = s[i+1], s[i]
			m, _ := strconv.Atoi(string(s))
			return m
		}
	}
}

func main() {
	g := &gen{r: rand.New(rand.NewPCG(24, 2026))}
	g.duplicates()
	g.distinct()
	fmt.Println("form\tlabel\tclaimed\tsource\tref_a\tref_b\ttotal_a\ttotal_b\tdays\tstate_a")
	for _, p := range g.out {
		fmt.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", p.form, p.label, p.claimed, p.source,
			strconv.QuoteToASCII(p.refA), strconv.QuoteToASCII(p.refB), money(p.totalA), money(p.totalB), p.days, p.stateA)
	}
	if len(g.out) < 500 {
		fmt.Fprintln(os.Stderr, "fewer than 500 pairs")
		os.Exit(1)
	}
}

func money(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// duplicates adds the true duplicates: B is A's invoice again.
func (g *gen) duplicates() {
	const d, yes, no = "duplicate", "yes", "no"
	g.add(20, "same-number-close", d, yes, "dataconsult,zedly", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days = p.refA, g.between(0, 7)
	})
	g.add(20, "same-number-late", d, yes, "ezr,dataconsult,overpayguard", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days = p.refA, g.between(8, 120)
		if g.r.IntN(4) == 0 {
			p.stateA = unpaid
		}
	})
	g.add(20, "same-number-cent", d, yes, "warner", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days, p.totalB = p.refA, g.between(0, 90), g.cent(p.totalA)
	})
	g.add(15, "same-number-amount-changed", d, yes, "warner,number7", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days, p.totalB = p.refA, g.between(0, 90), g.otherAmount(p.totalA)
	})
	g.add(25, "document-words", d, yes, "arbutus,overpayguard,langlinais", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = g.pick("Invoice No. ", "Invoice #", "#", "", "INV", "Inv. No. ", "Bill No. ", "Rechnung Nr. ", "Facture n\u00b0 ",
			"Factura n\u00fam. ", "Fattura n. ", "Factuur nr. ", "Fatura n\u00ba ", "Rg.-Nr. ") + n
		p.days = g.between(0, 60)
	})
	g.add(15, "leading-zeros", d, yes, "knime,number7,overpayguard", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = g.pick("", "INV-") + n
		p.refB = g.pick("0", "00", "000") + n
		p.days = g.between(0, 60)
	})
	g.add(20, "case-and-punctuation", d, yes, "langlinais,knime,docsumo,arbutus", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = g.pick("inv-", "INV/", "INV ", "INV.", "INV_", "INV:", "Inv-", "INV - ", ".", "INV\u2013") + n + g.pick("", "", " ", ".", "  ")
		p.days = g.between(0, 60)
	})
	g.add(30, "thousands-grouping", d, yes, "issue24,arbutus", func(p *pair) {
		n := g.num()
		p.refA = g.pick("", "INV-", "Invoice ") + strconv.Itoa(n)
		p.refB = g.pick("", "INV-", "Invoice ") + grouped(n, g.pick(" ", ",", ".", "'", "\u2019", "\u00a0", "\u202f", "\u2009"))
		p.days = g.between(0, 90)
		if g.r.IntN(3) == 0 {
			p.totalB = g.cent(p.totalA)
		}
	})
	g.add(25, "ocr-letter-for-digit", d, yes, "arbutus,tcs,zuiver", func(p *pair) {
		var s string
		for ok := false; !ok; {
			s, ok = g.ocr(strconv.Itoa(g.num()))
			p.refA = "INV-" + strings.NewReplacer("O", "0", "o", "0", "I", "1", "l", "1", "Z", "2", "S", "5", "B", "8").Replace(s)
		}
		p.refB = "INV-" + s
		p.days = g.between(0, 60)
	})
	g.add(30, "copy-mark", d, yes, "overpayguard,zedly,dataconsult", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = g.pick("INV-"+n+" copy", "INV-"+n+"-DUP", "COPY INV-"+n, "Invoice #"+n+" (reminder)", "INV-"+n+" DUPLICATE",
			"Reprint INV-"+n, "INV-"+n+"/Kopie", "Mahnung INV-"+n, "INV-"+n+" duplicata", "Copy of invoice "+n, "INV-"+n+"COPY", "INV-"+n+" (resent)")
		p.days = g.between(0, 120)
		if g.r.IntN(3) == 0 {
			p.totalB = g.cent(p.totalA)
		}
	})
	g.add(30, "letter-added", d, yes, "warner,langlinais,dataquery,covinly,knime", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = g.pick("", "INV-") + n
		p.refB = g.pick("", "INV-") + n + g.pick("A", " A", "a", "/a", "-A", "B", "X")
		p.days = g.between(0, 90)
		if g.r.IntN(3) == 0 {
			p.totalB = g.cent(p.totalA)
		}
	})
	g.add(15, "resend-suffix", d, yes, "zedly", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = "INV-" + n + g.pick("-R", "R", "-R1", "-RS")
		p.days = g.between(25, 75)
	})
	g.add(15, "year-or-vendor-code-added", d, yes, "langlinais,overpayguard", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = n
		p.refB = g.pick(n+"/2026", "2026-"+n, "ACME-"+n, "CT"+n, n+"-CT")
		p.days = g.between(0, 90)
	})
	g.add(15, "separator-inserted", d, yes, "langlinais", func(p *pair) {
		s := strconv.Itoa(g.num())
		i := 1 + g.r.IntN(len(s)-1)
		p.refA = "INV-" + s
		p.refB = "INV-" + s[:i] + g.pick("-", "/", "-", " / ") + s[i:]
		p.days = g.between(0, 60)
		if g.r.IntN(3) == 0 {
			p.totalB = g.cent(p.totalA)
		}
	})
	g.add(20, "look-alike-character", d, yes, "arbutus,tcs", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		switch g.r.IntN(4) {
		case 0:
			p.refB = "\u0406NV-" + n // Cyrillic I
		case 1:
			p.refB = "INV-" + n[:1] + "\u200b" + n[1:] // zero-width space
		case 2:
			p.refB = "INV-" + strings.Map(func(r rune) rune { return r - '0' + '\uff10' }, n) // full-width digits
		default:
			p.refB = "\u0421OPY INV-" + n // Cyrillic Es
		}
		p.days = g.between(0, 120)
		if g.r.IntN(2) == 0 {
			p.totalB = g.cent(p.totalA)
		}
	})
	g.add(15, "look-alike-character-amount-changed", d, yes, "arbutus,warner", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = g.pick("\u0406NV-", "INV-\u200b", "\u0406NV ") + n
		p.days, p.totalB = g.between(8, 120), g.otherAmount(p.totalA)
	})
	g.add(15, "keyed-without-number", d, yes, "acfe", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB = g.pick("", "Invoice", "No.", "-")
		p.days = g.between(0, 60)
	})
	g.add(10, "transposed-digits-close", d, yes, "covinly,ezr", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(g.transposed(n))
		p.days = g.between(0, 7)
	})
	g.add(10, "rebilled-new-number-close", d, yes, "zedly,covinly,langlinais", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(n+1+g.r.IntN(40))
		p.days = g.between(0, 7)
	})
	// Known misses: nothing but the amount in common, dates apart, is
	// what a vendor's recurring invoices look like too.
	g.add(10, "transposed-digits-late", d, no, "covinly,ezr", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(g.transposed(n))
		p.days = g.between(8, 90)
	})
	g.add(10, "rebilled-new-number-late", d, no, "zedly,covinly", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(n+1+g.r.IntN(40))
		p.days = g.between(8, 90)
	})
}

// distinct adds legitimate look-alikes: B is another invoice.
func (g *gen) distinct() {
	const d, na = "distinct", "-"
	g.add(40, "consecutive-numbers", d, na, "own", func(p *pair) {
		n := g.num()
		p.refA, p.refB = g.pick("INV-", "")+strconv.Itoa(n), g.pick("INV-", "")+strconv.Itoa(n+1)
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(0, 30)
		if g.r.IntN(3) == 0 {
			p.stateA = unpaid
		}
	})
	g.add(40, "recurring-monthly-same-amount", d, na, "number7", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(n+g.between(1, 300))
		p.days = g.between(28, 31)
	})
	g.add(20, "recurring-quarterly-same-amount", d, na, "number7", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(n+g.between(1, 900))
		p.days = g.between(89, 92)
	})
	g.add(30, "instalments", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		i := g.between(1, 5)
		sep := g.pick("-", "/", "-0")
		p.refA, p.refB = "INV-"+n+sep+strconv.Itoa(i), "INV-"+n+sep+strconv.Itoa(i+1)
		p.days = g.between(28, 92)
		if g.r.IntN(2) == 0 {
			p.totalB = g.otherAmount(p.totalA)
		}
	})
	g.add(15, "instalment-of-a-number", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA, p.refB = "INV-"+n, "INV-"+n+g.pick("-1", "-2", "/2")
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(28, 92)
	})
	g.add(30, "same-number-other-vendor", d, na, "number7", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days, p.stateA = p.refA, g.between(0, 30), other
		if g.r.IntN(2) == 0 {
			p.totalB = g.otherAmount(p.totalA)
		}
	})
	g.add(20, "reissue-after-credit-note", d, na, "zedly,covinly", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days, p.stateA = p.refA, g.between(0, 20), reversed
		p.totalB = g.otherAmount(p.totalA)
	})
	g.add(20, "yearly-numbering", d, na, "number7", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA, p.refB = n+"/2025", n+"/2026"
		p.days = g.between(330, 400)
		if g.r.IntN(2) == 0 {
			p.totalB = g.otherAmount(p.totalA)
		}
	})
	g.add(25, "longer-number", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA = "INV-" + n
		p.refB = "INV-" + g.pick(n+strconv.Itoa(g.r.IntN(10)), strconv.Itoa(1+g.r.IntN(9))+n)
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(0, 60)
	})
	g.add(25, "same-amount-unrelated-numbers", d, na, "own", func(p *pair) {
		p.refA, p.refB = g.prefixed(g.num()), g.prefixed(g.num())
		p.days = g.between(8, 120)
	})
	g.add(20, "one-digit-apart-other-amount", d, na, "own", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(g.transposed(n))
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(0, 60)
	})
	g.add(15, "non-latin-script-numbers", d, na, "own", func(p *pair) {
		n := g.num()
		prefix := g.pick("\u03a4\u0399\u039c-", "\u0421\u0427-", "\u0421\u0447\u0451\u0442 ") // Greek TIM, Cyrillic SCh, Schyot
		p.refA, p.refB = prefix+strconv.Itoa(n), prefix+strconv.Itoa(n+g.between(1, 30))
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(0, 60)
	})
	// Look-alikes the control holds on purpose (TestDuplicateSet's
	// heldDistinct): with only these signals, a person tells them apart.
	g.add(20, "weekly-same-amount", d, na, "own", func(p *pair) {
		n := g.num()
		p.refA, p.refB = "INV-"+strconv.Itoa(n), "INV-"+strconv.Itoa(n+g.between(1, 20))
		p.days = g.between(1, 7)
	})
	g.add(15, "instalments-same-day", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA, p.refB = "INV-"+n+"-1", "INV-"+n+"-2"
		p.days = 0
	})
	g.add(10, "supplement-same-week", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA, p.refB = "INV-"+n, "INV-"+n+g.pick("-1", "/S", "-SUP", "A")
		p.totalB, p.days = g.otherAmount(p.totalA), g.between(0, 7)
	})
	g.add(10, "digit-appended-same-amount", d, na, "own", func(p *pair) {
		n := strconv.Itoa(g.num())
		p.refA, p.refB = "INV-"+n, "INV-"+n+g.pick("0", "1", "2", "5", "8")
		p.days = g.between(8, 120)
	})
	g.add(10, "number-reused-next-year", d, na, "number7", func(p *pair) {
		p.refA = g.prefixed(g.num())
		p.refB, p.days = p.refA, g.between(340, 400)
		p.totalB = g.otherAmount(p.totalA)
	})
}
