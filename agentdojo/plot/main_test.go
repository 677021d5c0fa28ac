package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `{"suite":"banking","q":0.05,"runs":10,"points":[
 {"ablation":"both","p":0,"attacks_executed":0,"utility_ok":9},
 {"ablation":"both","p":0.5,"attacks_executed":1,"utility_ok":8},
 {"ablation":"neither","p":0,"attacks_executed":7,"utility_ok":10},
 {"ablation":"neither","p":0.5,"attacks_executed":7,"utility_ok":10}]}`

// TestPlot: a sweep's report becomes a PNG and an SVG with one legend
// entry per ablation; a report without points or a wrong extension is
// refused and leaves no file.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "sweep.png")
	if err := run(in, png); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("%s is not a PNG", png)
	}
	svg := filepath.Join(dir, "sweep.svg")
	if err := run(in, svg); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(svg)
	for _, want := range []string{"<svg", "both", "neither", "attacks executed (of 10 runs)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	empty := filepath.Join(dir, "empty.json")
	_ = os.WriteFile(empty, []byte(`{"points":[]}`), 0o644)
	if err := run(empty, filepath.Join(dir, "e.png")); err == nil {
		t.Error("a report without points was plotted")
	}
	if _, err := os.Stat(filepath.Join(dir, "e.png")); err == nil {
		t.Error("a refused plot left its file")
	}
	if err := run(in, filepath.Join(dir, "x.gif")); err == nil {
		t.Error("a .gif was accepted")
	}
}
