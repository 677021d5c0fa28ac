package mcpproxy

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
)

// TotalSpec declares a running total of a tool's budget amount
// (contract.Total) and the thresholds that apply to the amount plus what
// the total held before it: the gateway keeps the total in its store,
// across the replicas that share it, so that splitting a payment (two
// just under a threshold to one payee) never lowers the approval it needs.
type TotalSpec struct {
	// Name is the total's name and the fact the policy sees
	// (context.facts.NAME, Long, minor units); the schema must declare
	// it in the facts of the tool's action.
	Name string
	// By names the critical, required parameters whose trusted values
	// identify what is added up (the payee).
	By []string
	// Window is the period the total covers.
	Window contract.Window
	// Zone is the calendar of the Day and Week windows; nil means UTC.
	Zone *time.Location
	// ConfirmAbove, FourEyesAbove and RefuseAbove are thresholds in minor
	// units of the budget parameter (its scale), applied to the amount
	// plus the total: above ConfirmAbove the user confirms, above
	// FourEyesAbove two approvers approve, above RefuseAbove the call is
	// refused. Zero means no such threshold.
	ConfirmAbove, FourEyesAbove, RefuseAbove intent.Amount
}

// TotalsPolicyFile is the name of the policy file PolicyFS adds to the
// operator's policy directory: the thresholds of the proxied tools'
// totals, written as Cedar (ToolSpec.TotalsPolicy).
const TotalsPolicyFile = "intentplane-totals.cedar"

// contractTotals returns the contract's totals of s.
func (s ToolSpec) contractTotals() []contract.Total {
	var out []contract.Total
	for _, t := range s.Totals {
		out = append(out, contract.Total{Name: t.Name, By: slices.Clone(t.By), Window: t.Window, Zone: t.Zone})
	}
	return out
}

// TotalsPolicy returns the Cedar policies enforcing the thresholds of s's
// totals on its action, in the budget parameter's scale: one forbid per
// threshold, an approval guard for ConfirmAbove and FourEyesAbove, each
// with an @id naming the action, the total and the threshold. Each
// compares the total with the threshold less the amount, which cannot
// overflow (the amount is above zero, the threshold not below it), so a
// total near the int64 limit is refused by the policy, with its reason,
// rather than left undecided. Empty when s has no threshold.
func (s ToolSpec) TotalsPolicy() string {
	var scale uint8
	for _, p := range s.Params {
		if p.Name == s.Budget && p.Scale > 0 && p.Scale <= 18 {
			scale = uint8(p.Scale)
		}
	}
	var b strings.Builder
	_, verb, _ := strings.Cut(string(s.Action), ".")
	for _, t := range s.Totals {
		by := strings.Join(t.By, " and ")
		for _, th := range []struct {
			level, what string
			limit       intent.Amount
		}{
			{"refuse", "are refused: the user must make them outside the agent", t.RefuseAbove},
			{"four_eyes", "need two approvers", t.FourEyesAbove},
			{"confirm", "need the user's confirmation", t.ConfirmAbove},
		} {
			if th.limit <= 0 {
				continue
			}
			fmt.Fprintf(&b, "@id(%s)\n", strconv.Quote("totals-"+verb+"-"+t.Name+"-"+th.level))
			if th.level != "refuse" {
				fmt.Fprintf(&b, "@approval(%q)\n", th.level)
			}
			reason := fmt.Sprintf("payments to one %s above %s %s, this one included, %s", by, intent.FormatAmount(th.limit, scale), windowText(t.Window), th.what)
			fmt.Fprintf(&b, "@reason(%s)\n", strconv.Quote(reason))
			fmt.Fprintf(&b, "forbid (principal, action == Action::%s, resource)\n", strconv.Quote(string(s.Action)))
			fmt.Fprintf(&b, "when { context.facts.%s > %d - context.amount }", t.Name, int64(th.limit))
			if th.level != "refuse" {
				fmt.Fprintf(&b, "\nunless { context.approval.%s }", th.level)
			}
			b.WriteString(";\n\n")
		}
	}
	return b.String()
}

// windowText says what a window covers, for a reason.
func windowText(w contract.Window) string {
	return contract.Total{Window: w}.Text()
}

// PolicyFS returns base (a policy directory) with the file
// TotalsPolicyFile added holding policy; base itself is returned when
// policy is empty. It is an error for base to hold a file of that name.
func PolicyFS(base fs.FS, policy string) (fs.FS, error) {
	if policy == "" {
		return base, nil
	}
	if _, err := fs.Stat(base, TotalsPolicyFile); err == nil {
		return nil, fmt.Errorf("the policy directory holds %s, the name of the file intentplane-mcp writes from the tools' totals: rename it", TotalsPolicyFile)
	}
	return overlayFS{base: base, data: []byte(policy)}, nil
}

// overlayFS is a file system with one more file at its root,
// TotalsPolicyFile, holding data.
type overlayFS struct {
	base fs.FS
	data []byte
}

func (o overlayFS) Open(name string) (fs.File, error) {
	if name == TotalsPolicyFile {
		return &memFile{Reader: bytes.NewReader(o.data), size: int64(len(o.data))}, nil
	}
	return o.base.Open(name)
}

func (o overlayFS) ReadFile(name string) ([]byte, error) {
	if name == TotalsPolicyFile {
		return slices.Clone(o.data), nil
	}
	return fs.ReadFile(o.base, name)
}

func (o overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(o.base, name)
	if err != nil || name != "." {
		return entries, err
	}
	entries = append(entries, fs.FileInfoToDirEntry(memInfo{size: int64(len(o.data))}))
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// memFile is the generated file, opened.
type memFile struct {
	*bytes.Reader
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{size: f.size}, nil }
func (f *memFile) Close() error               { return nil }

// memInfo describes the generated file.
type memInfo struct{ size int64 }

func (i memInfo) Name() string       { return TotalsPolicyFile }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

var (
	_ fs.ReadDirFS  = overlayFS{}
	_ fs.ReadFileFS = overlayFS{}
	_ io.ReaderAt   = (*memFile)(nil)
)
