package intent_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// TestCanonicalGolden freezes the canonical encoding: if these bytes change,
// every stored receipt, operation hash and signature breaks.
func TestCanonicalGolden(t *testing.T) {
	t.Parallel()
	v := map[string]any{
		"z":      "last",
		"a":      intent.Args{"amount": intent.AmountValue(125000, 2), "to": intent.Str("DE89"), "ok": intent.Bool(true), "n": intent.Int(-7)},
		"quote":  "he said \"hi\"\\\n\x01é<>&",
		"time":   time.Date(2026, 11, 30, 11, 0, 0, 5, time.FixedZone("CET", 3600)),
		"list":   []string{"b", "a"},
		"nested": []any{nil, int64(1), true, map[string]string{"y": "1", "x": "2"}},
	}
	got, err := intent.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":{"amount":125000,"n":-7,"ok":true,"to":"DE89"},"list":["b","a"],"nested":[null,1,true,{"x":"2","y":"1"}],"quote":"he said \"hi\"\\\u000a\u0001é<>&","time":"2026-11-30T10:00:00.000000005Z","z":"last"}`
	if string(got) != want {
		t.Fatalf("Canonical() =\n%s\nwant\n%s", got, want)
	}
}

func TestCanonicalRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
	}{
		{"float", 1.5},
		{"float in map", map[string]any{"a": float32(1)}},
		{"invalid utf8", "\xff"},
		{"invalid value", intent.Value{}},
		{"unsupported", struct{}{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := intent.Canonical(tt.v); !errors.Is(err, intent.ErrNotCanonical) {
				t.Fatalf("Canonical(%#v) error = %v, want ErrNotCanonical", tt.v, err)
			}
		})
	}
}

// TestOperationHashGolden freezes the operation hash and shows that one
// cent, another payee or another mandate makes another operation.
func TestOperationHashGolden(t *testing.T) {
	t.Parallel()
	op := intent.Operation{
		Action:    "banking.send_money",
		Args:      intent.Args{"recipient": intent.Str("GB29NWBK60161331926819"), "amount": intent.AmountValue(1000, 2)},
		MandateID: "m-1",
		Owner:     "emma",
	}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	const want = "f6352d59c1c03057fd97cf8518fe60ee1c67723faa7c973ff607a14babfa6b65"
	if h.String() != want {
		t.Fatalf("operation hash = %s, want %s: the canonical encoding drifted", h, want)
	}
	again, _ := op.Hash()
	if again != h {
		t.Fatal("hash is not deterministic")
	}
	variants := map[string]intent.Operation{
		"one cent more": {Action: op.Action, MandateID: "m-1", Args: intent.Args{"recipient": op.Args["recipient"], "amount": intent.AmountValue(1001, 2)}},
		"other payee":   {Action: op.Action, MandateID: "m-1", Args: intent.Args{"recipient": intent.Str("CH9300762011623852957"), "amount": op.Args["amount"]}},
		"other mandate": {Action: op.Action, MandateID: "m-2", Args: op.Args},
		"other action":  {Action: "banking.schedule_transaction", MandateID: "m-1", Args: op.Args},
	}
	for name, v := range variants {
		vh, err := v.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if vh == h {
			t.Errorf("%s: same operation hash", name)
		}
	}
	p, err := intent.ParseOperationHash(h.String())
	if err != nil || p != h {
		t.Fatalf("ParseOperationHash round trip = %v, %v", p, err)
	}
	if _, err := intent.ParseOperationHash("D2" + h.String()[2:]); err == nil {
		t.Fatal("upper-case hex accepted")
	}
}

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a     intent.Amount
		scale uint8
		want  string
	}{
		{125000, 2, "1250.00"},
		{5, 2, "0.05"},
		{0, 2, "0.00"},
		{-129, 2, "-1.29"},
		{7, 0, "7"},
		{math.MinInt64, 2, "-92233720368547758.08"},
	}
	for _, tt := range tests {
		if got := intent.FormatAmount(tt.a, tt.scale); got != tt.want {
			t.Errorf("FormatAmount(%d, %d) = %q, want %q", tt.a, tt.scale, got, tt.want)
		}
	}
}

func TestEncoderOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(e *intent.Encoder)
		want  string // empty means an error
	}{
		{"ascending", func(e *intent.Encoder) {
			e.BeginObject()
			e.Key("a")
			e.Int(1)
			e.Key("b")
			e.BeginArray()
			e.String("x")
			e.Bool(true)
			e.EndArray()
			e.EndObject()
		}, `{"a":1,"b":["x",true]}`},
		{"hex", func(e *intent.Encoder) {
			e.BeginArray()
			e.Hex([]byte{0x00, 0xab, 0x7f})
			e.Hex(nil)
			e.EndArray()
		}, `["00ab7f",""]`},
		{"descending", func(e *intent.Encoder) {
			e.BeginObject()
			e.Key("b")
			e.Int(1)
			e.Key("a")
			e.Int(2)
			e.EndObject()
		}, ""},
		{"repeated", func(e *intent.Encoder) {
			e.BeginObject()
			e.Key("a")
			e.Int(1)
			e.Key("a")
			e.Int(2)
			e.EndObject()
		}, ""},
		{"value without key", func(e *intent.Encoder) {
			e.BeginObject()
			e.Int(1)
			e.EndObject()
		}, ""},
		{"left open", func(e *intent.Encoder) { e.BeginArray() }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := intent.NewEncoder(nil)
			tt.write(e)
			got, err := e.Bytes()
			if tt.want == "" {
				if !errors.Is(err, intent.ErrNotCanonical) {
					t.Fatalf("Bytes() = %q, %v; want ErrNotCanonical", got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Bytes() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
