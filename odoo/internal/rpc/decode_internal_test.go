package rpc

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeAnswer: whatever the server sends, decoding an answer and its
// records gives values or errors, never a panic.
func FuzzDecodeAnswer(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<?xml version='1.0'?><methodResponse><params><param><value><array><data><value><struct><member><name>id</name><value><int>7</int></value></member><member><name>partner_id</name><value><array><data><value><int>3</int></value><value><string>ACME</string></value></data></array></value></member><member><name>write_date</name><value><string>2026-11-30 10:00:00</string></value></member><member><name>amount_total</name><value><double>1250.005</double></value></member></struct></value></data></array></value></param></params></methodResponse>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeAnswer(raw)
		if err != nil {
			return
		}
		rs, err := Records(v)
		if err != nil {
			return
		}
		for _, r := range rs {
			_, _ = r.ID()
			_, _, _ = r.Many2one("partner_id")
			_, _ = r.Datetime("write_date")
			_, _ = r.Date("invoice_date_due")
			_, _ = r.Amount("amount_total", 2)
			_, _ = r.IDs("reconciled_bill_ids")
			_, _ = r.Str("name")
			_, _ = r.Bool("active")
			_, _ = r.Int("sequence")
		}
	})
}

func TestDecodeRecordedAnswers(t *testing.T) {
	for _, tt := range []struct {
		file string
		code int
	}{{"version.xml", 0}, {"fault_unknown_db.xml", 1}, {"fault_access_denied.xml", 3}} {
		raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeAnswer(raw)
		if tt.code == 0 {
			m, ok := v.(map[string]any)
			if err != nil || !ok || m["server_serie"] != "17.0" {
				t.Errorf("%s: %v, %v", tt.file, v, err)
			}
			continue
		}
		f, ok := err.(*Fault)
		if !ok || f.Code != tt.code || len(f.Message) > 200 {
			t.Errorf("%s: %v; want fault %d with the traceback cut to its last line", tt.file, err, tt.code)
		}
	}
}

func TestMinorUnits(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		dec  int
		want int64
	}{{1250.0, 2, 125000}, {0.1 + 0.2, 2, 30}, {1250.005, 2, 125001}, {19.99, 2, 1999}, {100, 0, 100}, {1.234, 3, 1234}} {
		got, err := toMinor(tt.f, tt.dec)
		if err != nil || int64(got) != tt.want {
			t.Errorf("toMinor(%v, %d) = %d, %v; want %d", tt.f, tt.dec, got, err, tt.want)
		}
		if back := FromMinor(got, tt.dec); back != float64(tt.want)/pow10(tt.dec) {
			t.Errorf("fromMinor(%d) = %v", got, back)
		}
	}
}

func pow10(n int) float64 {
	p := 1.0
	for range n {
		p *= 10
	}
	return p
}
