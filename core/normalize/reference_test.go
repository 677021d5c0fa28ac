package normalize_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	// Every reference of a group has the group's key; no two groups share
	// one.
	groups := []struct {
		key  string
		refs []string
	}{
		{"2290", []string{
			// Issue 13's spellings of one invoice.
			"INV-2290", "Invoice No. 2290", "Rechnung Nr. 2290", "2290", "INV-229O", "inv 02290",
			// Separators, case, leading zeros.
			"INV 2290", "INV2290", "inv2290", "INV/2290", "INV_2290", "INV.2290", "INV:2290", "INV#2290",
			"#2290", "No. 2290", "No.2290", "No2290", "N02290", "Nr. 02290", "  2290  ", "002290", "INV-0002290",
			"Invoice number: 2290", "INVOICE #2290", "Invoice Ref. 2290", "Bill No. 2290",
			// German, French, Spanish, Italian, Dutch, Portuguese.
			"Rechnung 2290", "Rechnungsnr. 2290", "Rechnungsnummer 2290", "Rg.-Nr. 2290", "RgNr 2290", "Re-Nr. 2290", "RE 2290",
			"Facture n° 2290", "Facture nº 2290", "Facture N° 2290", "Fact. 2290", "Facture numéro 2290", "Réf. 2290",
			"Factura núm. 2290", "Factura número 2290", "Fra. 2290", "Factura No. 2290",
			"Fattura n. 2290", "Fattura nr. 2290", "Ft. 2290", "Fatt. n. 2290", "Fattura numero 2290",
			"Factuur nr. 2290", "Factuurnummer 2290", "Factuur 2290",
			"Fatura nº 2290", "Fatura № 2290",
			// Unicode space separators.
			"INV\u00a02290", "Invoice\u202fNo.\u20092290",
			// Unicode dashes, as PDFs and word processors write '-' (found by
			// the trial of issue 13: "INV–2290" had no key, so a copy of a
			// paid "INV-2290" dated weeks later was only confirmed).
			"INV\u20132290", "INV \u2014 2290", "INV\u20102290", "INV\u20112290", "Rg.\u2013Nr. 2290",
			// OCR and typing confusions.
			"INV-229o", "229O", "ZZ9O",
			// Thousands grouping inside the number (issue 24): spaces, the
			// no-break, narrow no-break and thin spaces of typeset numbers,
			// commas, dots, ASCII and typographic apostrophes.
			"2 290", "INV 2 290", "2,290", "INV-2,290", "2.290", "2'290", "2’290", "2 290", "2 290", "2 290",
			"Bill 2 290", "INV2 290", "Z Z9O", "02,290", "2 290 ",
			// Copy marks before or after the number, glued or not (issue 24).
			"COPY 2290", "2290-DUP", "INV-2290 copy", "Invoice #2290 (reminder)", "copy of invoice 2290", "2290COPY", "DUP2290",
			"DUPLICATE INVOICE 2290", "INV-2290 [DUPLICATE]", "Reprint INV-2290", "Kopie Rechnung Nr. 2290", "Mahnung 2290",
			"Rechnung 2290 Duplikat", "copie de la facture 2290", "Facture 2290 duplicata", "Copia factura 2290",
			"Fattura 2290 sollecito", "Factuur 2290 herinnering", "2 290 copy",
		}},
		{"2291", []string{"INV-2291", "Invoice No. 2291", "229l", "229I", "ZZ9I"}},
		{"2250", []string{"INV-22SO", "2250", "INV-22so"}},
		{"8102", []string{"B1O2", "8102", "INV-BIOZ"}},
		{"2290.1", []string{"INV-2290-1", "2290/01", "2290 1", "Invoice 2290-001", "2,290-1", "COPY 2290-1"}},
		{"2.290", []string{"2-290", "2/290", "2 , 290"}},
		{"2290A", []string{"INV-2290A", "2290 A"}},
		{"2290.2026", []string{"INV-2290/2026", "2290-2026"}},
		{"1234567", []string{"1.234.567", "1 234 567", "1,234,567"}},
		{"2024.1.2", []string{"2024 001 002"}},
		{"2.29", []string{"2 29", "2.29"}},
		{"2290.5", []string{"2.290,5"}},
		{"22901", []string{"INV-22901", "22901"}},
		{"ACME2290", []string{"ACME-2290", "ACME 2290", "acme2290", "ACME-02290"}},
		{"2024.12", []string{"2024-12", "2024 - 0012"}},
		{"2024.1NV12", []string{"2024/INV/12", "2024 inv 0012"}},
		{"0", []string{"INV-0", "INV-000", "No. O"}},
		{"ACME", []string{"Invoice ACME", "acme"}},
		{"20241NV12", []string{"2024INV12", "2024inv0012"}},
	}
	seen := map[string]string{}
	for _, g := range groups {
		if other, ok := seen[g.key]; ok {
			t.Fatalf("test bug: key %q of two groups (%s)", g.key, other)
		}
		seen[g.key] = g.refs[0]
		for _, ref := range g.refs {
			got, err := normalize.DuplicateKey(ref)
			if err != nil || got != g.key {
				t.Errorf("DuplicateKey(%q) = %q, %v; want %q", ref, got, err, g.key)
			}
		}
	}
}

func TestDuplicateKeyRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, reason string
		lookAlike        bool
	}{
		{"empty", "", "has no number or name besides document words, copy marks and separators; the reference cannot be compared", false},
		{"only copy marks", "Copy of invoice (duplicate)", "has no number or name", false},
		{"only separators", " -- / ", "has no number or name", false},
		{"only document words", "Invoice No.", "has no number or name", false},
		{"Cyrillic I", "\u0406NV-2290", "contains the non-ASCII character U+0406 at position 1; the reference cannot be compared", true},
		{"Cyrillic letter after the number", "INV-2290\u0411", "U+0411 at position 9", true},
		{"full-width digits", "INV-\uff12\uff12\uff19\uff10", "U+FF12 at position 5", true},
		{"Arabic-Indic digits", "INV-\u0662\u0662\u0669\u0660", "U+0662 at position 5", true},
		{"Kelvin sign", "\u212a-2290", "U+212A at position 1", true},
		{"zero-width space", "INV-22\u200b90", "U+200B (zero-width space) at position 7", true},
		{"accented letter outside document words", "R\u00e9f. \u00c9-2290", "has an accented letter outside the document words", true},
		{"other accented letter", "Caf\u00e8-2290", "U+00E8 at position 4", true},
		{"tab", "INV\t2290", "control character U+0009 (tab) at position 4", false},
		{"C1 control", "INV\u00852290", "control character U+0085 at position 4", false},
		{"invalid UTF-8", "INV-\xff", "byte 0xFF", false},
		{"too long", strings.Repeat("1", 129), "has 129 characters; a reference has at most 128", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := normalize.DuplicateKey(tt.in)
			if err == nil {
				t.Fatalf("DuplicateKey(%q) = %q, want an error", tt.in, got)
			}
			if got != "" {
				t.Errorf("DuplicateKey(%q) returned %q with its error", tt.in, got)
			}
			checkError(t, err, normalize.KindReference, tt.in, tt.reason)
			if errors.Is(err, normalize.ErrLookAlike) != tt.lookAlike {
				t.Errorf("DuplicateKey(%q): errors.Is(err, ErrLookAlike) = %v, want %v", tt.in, !tt.lookAlike, tt.lookAlike)
			}
		})
	}
}

func ExampleDuplicateKey() {
	for _, ref := range []string{"INV-2290", "Rechnung Nr. 2290", "INV-229O", "INV-2291", "\u0406NV-2290"} {
		fmt.Println(normalize.DuplicateKey(ref))
	}
	// Output:
	// 2290 <nil>
	// 2290 <nil>
	// 2290 <nil>
	// 2291 <nil>
	//  reference: "\u0406NV-2290": contains the non-ASCII character U+0406 at position 1; the reference cannot be compared: look-alike characters are never folded, a person compares it
}

func BenchmarkDuplicateKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if k, err := normalize.DuplicateKey("Rechnung Nr. 02290"); k != "2290" || err != nil {
			b.Fatal(k, err)
		}
	}
}

// TestLookAlikeKey (issue 24): a reference refused for look-alike
// characters has the key of the ASCII it imitates, for suspicion only; a
// comparable reference and one with other characters have none.
func TestLookAlikeKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ref, key string
	}{
		{"\u0406NV-2290", "2290"},                                // Cyrillic I
		{"INV-\uff12\uff12\uff19\uff10", "2290"},                 // full-width digits
		{"INV-22\u200b90", "2290"},                               // zero-width space
		{"INV-\u0662\u0662\u0669\u0660", "2290"},                 // Arabic-Indic digits
		{"INV-\U0001d7d0\U0001d7d0\U0001d7d7\U0001d7ce", "2290"}, // mathematical bold digits
		{"\u0421OPY INV-2290", "2290"},                           // Cyrillic Es in a copy mark
		{"INV-229\u039f", "2290"},                                // Greek Omicron, then rule 2
		{"\u212a-2290", "K2290"},                                 // Kelvin sign
		{"\u0410\u0421\u041c\u0415-2290", "ACME2290"},            // Cyrillic ACME
		{"INV-2290", ""},                                         // a key of its own
		{"\u0421\u0427-100", ""},                                 // Cyrillic Che imitates nothing
		{"INV-2290\u0411", ""},                                   // Cyrillic Be imitates nothing
		{"R\u00e9f. \u00c9-2290", ""},                            // an accented letter
		{"INV\t\u0406", ""},                                      // a control character
	} {
		key, ok := normalize.LookAlikeKey(tt.ref)
		if key != tt.key || ok != (tt.key != "") {
			t.Errorf("LookAlikeKey(%q) = %q, %v; want %q", tt.ref, key, ok, tt.key)
		}
	}
}
