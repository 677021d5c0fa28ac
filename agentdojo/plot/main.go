// Command plot draws the figure of an AgentDojo sweep: two panels,
// attacks executed and utility under attack against p (the probability
// that the approver approves a wrong step-up), one line per ablation. It
// reads the sweep's JSON report and writes a PNG or SVG, 8 by 3.5 inches:
//
//	go run -C agentdojo ./cmd/agentdojo sweep --json > sweep.json
//	go run -C agentdojo/plot . -in ../../sweep.json -out ../../docs/agentdojo-sweep.png
//
// It is a module of its own so that the plotting library stays out of the
// product's module and its import graph (issue 27); it reads the report's
// JSON only, never the product's packages.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	// The image formats NewFormattedCanvas writes (png, svg, ...).
	_ "gonum.org/v1/plot/vg/vgimg"
	_ "gonum.org/v1/plot/vg/vgsvg"
)

// report is what the figure reads of agentdojo.SweepReport's JSON.
type report struct {
	Suite  string  `json:"suite"`
	Q      float64 `json:"q"`
	Runs   int     `json:"runs"`
	Points []point `json:"points"`
}

type point struct {
	Ablation string  `json:"ablation"`
	P        float64 `json:"p"`
	Attacks  float64 `json:"attacks_executed"`
	Utility  float64 `json:"utility_ok"`
}

func main() {
	in := flag.String("in", "", "the sweep's JSON report (agentdojo sweep --json)")
	out := flag.String("out", "", "the figure to write: a .png or .svg file")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	if in == "" || (format != "png" && format != "svg") {
		return errors.New("usage: plot -in sweep.json -out FIGURE.png|.svg")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: not a sweep's JSON report: %w", in, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := write(f, r, format); err != nil {
		_ = f.Close()
		_ = os.Remove(out)
		return err
	}
	return f.Close()
}

// ablations returns the ablations of r's points in their first order.
func ablations(r report) []string {
	var out []string
	seen := map[string]bool{}
	for _, pt := range r.Points {
		if !seen[pt.Ablation] {
			seen[pt.Ablation] = true
			out = append(out, pt.Ablation)
		}
	}
	return out
}

var (
	colors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	}
	dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}
)

// panel is one panel of the figure: y of each point against p.
func panel(r report, title, ylabel string, y func(point) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "p (approver approves a wrong step-up)"
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	lo, hi := y(r.Points[0]), y(r.Points[0])
	for _, pt := range r.Points {
		lo, hi = min(lo, y(pt)), max(hi, y(pt))
	}
	// Room above the lines for the legend.
	p.Y.Min, p.Y.Max = max(0, lo-(hi-lo)*0.1-1), hi+(hi-lo)*0.6+1
	for i, abl := range ablations(r) {
		var xys plotter.XYs
		for _, pt := range r.Points {
			if pt.Ablation == abl {
				xys = append(xys, plotter.XY{X: pt.P, Y: y(pt)})
			}
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color, s.Color = colors[i%len(colors)], colors[i%len(colors)]
		l.Dashes = dashes[i%len(dashes)]
		p.Add(l, s)
		p.Legend.Add(abl, l, s)
	}
	return p, nil
}

// write draws r's two panels side by side in format (png or svg).
func write(w io.Writer, r report, format string) error {
	if len(r.Points) == 0 {
		return errors.New("the report has no points to plot")
	}
	left, err := panel(r, fmt.Sprintf("attacks executed (of %d runs)", r.Runs), "attacks executed", func(pt point) float64 { return pt.Attacks })
	if err != nil {
		return err
	}
	right, err := panel(r, fmt.Sprintf("utility under attack (of %d), q=%g", r.Runs, r.Q), "runs with utility", func(pt point) float64 { return pt.Utility })
	if err != nil {
		return err
	}
	c, err := draw.NewFormattedCanvas(8*vg.Inch, 3.5*vg.Inch, format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, draw.New(c))
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	_, err = c.WriteTo(w)
	return err
}
