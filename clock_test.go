package intentplane_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFixedDatesHaveAClock enforces the rule that keeps the tests
// independent of the day they run on (on 3 December 2026 a call-back
// dated 2026-11-30 had expired, and `go test ./...` failed from then on):
//
// A test may write a fixed date (time.Date with a literal year) only where
// the code under test reads the time from a clock the test gives it. A
// test function that writes one (or uses a package-level variable that
// holds one) must therefore not, in the same function, build a component
// that falls back to the real clock: a call passing nil for a
// `func() time.Time` parameter (mem.New(nil), ap.DemoERP(nil)), or a
// composite literal of a struct with a `Now func() time.Time` field that
// does not set it (ap.Config{...}, gateway.Config{...}). Such a test
// either sets the clock (a fixed now, usually the better choice) or dates
// its data relative to time.Now().
//
// The check is syntactic and per function: a fixture built in a helper is
// not seen, nor a struct given to a helper of the test or built before
// the call it is given to. Where the fixed date is pure data that nothing compares with
// the clock, the line building the component carries the comment
// "//clock:ok" followed by the reason.
//
// The rule is also checked empirically, out of band, by running the suite
// with the clock moved: with a copy of GOROOT whose time.Now adds an offset
// to the wall clock (Go reads the clock through the vDSO, so libfaketime
// cannot move it), `go test ./...` must pass 30 days, a year and five years
// ahead, and from 23:59:58 UTC on 31 December.
func TestFixedDatesHaveAClock(t *testing.T) {
	pkgs := listPackages(t)
	fset := token.NewFileSet()
	parse := func(dir, name string) *ast.File {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}

	// What falls back to the real clock: per import path, the functions
	// with a func() time.Time parameter (its index) and the structs with
	// a func() time.Time field named Now.
	clockFuncs := map[string]map[string]int{}
	clockTypes := map[string]map[string]bool{}
	for _, p := range pkgs {
		for _, name := range p.GoFiles {
			f := parse(p.Dir, name)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil {
						continue
					}
					i := 0
					for _, field := range d.Type.Params.List {
						n := max(len(field.Names), 1)
						if isClock(field.Type) {
							if clockFuncs[p.ImportPath] == nil {
								clockFuncs[p.ImportPath] = map[string]int{}
							}
							clockFuncs[p.ImportPath][d.Name.Name] = i
						}
						i += n
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						ts, ok := s.(*ast.TypeSpec)
						if !ok {
							continue
						}
						st, ok := ts.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, field := range st.Fields.List {
							if isClock(field.Type) && slices.ContainsFunc(field.Names, func(n *ast.Ident) bool { return n.Name == "Now" }) {
								if clockTypes[p.ImportPath] == nil {
									clockTypes[p.ImportPath] = map[string]bool{}
								}
								clockTypes[p.ImportPath][ts.Name.Name] = true
							}
						}
					}
				}
			}
		}
	}
	if len(clockFuncs) == 0 || len(clockTypes) == 0 {
		t.Fatal("found no function or type taking a clock: the check is not looking at the module")
	}

	// The test code: test files, and the helper packages tests share
	// (storetest, erptest, aptest, ...).
	type unit struct {
		importPath string // of the package the files are compiled into, for unqualified names
		dir        string
		files      []string
	}
	var units []unit
	for _, p := range pkgs {
		if len(p.TestGoFiles) > 0 {
			units = append(units, unit{p.ImportPath, p.Dir, p.TestGoFiles})
		}
		if len(p.XTestGoFiles) > 0 {
			units = append(units, unit{p.ImportPath + "_test", p.Dir, p.XTestGoFiles})
		}
		if strings.HasSuffix(path.Base(p.ImportPath), "test") {
			units = append(units, unit{p.ImportPath, p.Dir, p.GoFiles})
		}
	}
	checked := 0
	for _, u := range units {
		files := make([]*ast.File, len(u.files))
		for i, name := range u.files {
			files[i] = parse(u.dir, name)
		}
		// Package-level variables that hold a fixed date.
		fixedVars := map[string]token.Pos{}
		for _, f := range files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR && gd.Tok != token.CONST {
					continue
				}
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					for i, v := range vs.Values {
						if pos := fixedDate(v, nil); pos.IsValid() && i < len(vs.Names) {
							fixedVars[vs.Names[i].Name] = pos
						}
					}
				}
			}
		}
		for _, f := range files {
			imports := map[string]string{}
			for _, is := range f.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				name := path.Base(p)
				if is.Name != nil {
					name = is.Name.Name
				}
				imports[name] = p
			}
			ok := map[int]bool{} // lines marked //clock:ok
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					if strings.HasPrefix(c.Text, "//clock:ok") {
						ok[fset.Position(c.Pos()).Line] = true
					}
				}
			}
			// resolve returns the import path and name of a reference to a
			// package-level name: pkg.Name, or Name in the package itself.
			resolve := func(e ast.Expr) (string, string) {
				switch e := e.(type) {
				case *ast.SelectorExpr:
					if x, isIdent := e.X.(*ast.Ident); isIdent && imports[x.Name] != "" {
						return imports[x.Name], e.Sel.Name
					}
				case *ast.Ident:
					return strings.TrimSuffix(u.importPath, "_test"), e.Name
				}
				return "", ""
			}
			for _, d := range f.Decls {
				fd, isFunc := d.(*ast.FuncDecl)
				if !isFunc || fd.Body == nil {
					continue
				}
				checked++
				date := fixedDate(fd.Body, fixedVars)
				if !date.IsValid() {
					continue
				}
				// The composite literals given to a function of another
				// package (gateway.New(gateway.Config{...})): one given to
				// a helper of the test may have its clock set there.
				passed := map[*ast.CompositeLit]bool{}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, isCall := n.(*ast.CallExpr)
					if !isCall {
						return true
					}
					if sel, isSel := call.Fun.(*ast.SelectorExpr); !isSel || imports[identName(sel.X)] == "" {
						return true
					}
					for _, a := range call.Args {
						if u, isUnary := a.(*ast.UnaryExpr); isUnary && u.Op == token.AND {
							a = u.X
						}
						if cl, isLit := a.(*ast.CompositeLit); isLit {
							passed[cl] = true
						}
					}
					return true
				})
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					var what string
					switch n := n.(type) {
					case *ast.CallExpr:
						p, name := resolve(n.Fun)
						if i, isClockFunc := clockFuncs[p][name]; isClockFunc && i < len(n.Args) {
							if id, isIdent := n.Args[i].(*ast.Ident); isIdent && id.Name == "nil" {
								what = fmt.Sprintf("%s.%s(nil) reads the real clock", path.Base(p), name)
							}
						}
					case *ast.CompositeLit:
						p, name := resolve(n.Type)
						if !clockTypes[p][name] || !passed[n] {
							break
						}
						if !slices.ContainsFunc(n.Elts, func(e ast.Expr) bool {
							kv, isKV := e.(*ast.KeyValueExpr)
							if !isKV {
								return true // positional: every field is set
							}
							k, isIdent := kv.Key.(*ast.Ident)
							return isIdent && k.Name == "Now"
						}) {
							what = fmt.Sprintf("%s.%s without Now reads the real clock", path.Base(p), name)
						}
					}
					if what != "" {
						pos := fset.Position(n.Pos())
						if !ok[pos.Line] {
							t.Errorf("%s: %s, and %s fixes a date (%s): give it the test's clock, date the data relative to time.Now(), or mark the line //clock:ok with the reason the date is pure data",
								pos, what, fd.Name.Name, fset.Position(date))
						}
					}
					return true
				})
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d functions: the check is not looking at the tests", checked)
	}
}

// identName is e's name if e is an identifier, "" if not.
func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// isClock reports whether e is the type func() time.Time.
func isClock(e ast.Expr) bool {
	ft, ok := e.(*ast.FuncType)
	if !ok || ft.Params.NumFields() != 0 || ft.Results.NumFields() != 1 {
		return false
	}
	sel, ok := ft.Results.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "time" && sel.Sel.Name == "Time"
}

// fixedDate returns the position of the first fixed date in n: a call
// time.Date whose year is an integer literal, or a use of one of vars
// (package-level variables holding one); token.NoPos if there is none.
func fixedDate(n ast.Node, vars map[string]token.Pos) token.Pos {
	var pos token.Pos
	ast.Inspect(n, func(n ast.Node) bool {
		if pos.IsValid() {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Date" || len(n.Args) == 0 {
				break
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "time" {
				break
			}
			if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.INT {
				pos = n.Pos()
			}
		case *ast.SelectorExpr: // x.Name: only x may name a variable
			if p := fixedDate(n.X, vars); p.IsValid() {
				pos = p
			}
			return false
		case *ast.KeyValueExpr: // Field: value: only value, unless a map's key
			if _, ok := n.Key.(*ast.Ident); !ok {
				if p := fixedDate(n.Key, vars); p.IsValid() {
					pos = p
				}
			}
			if p := fixedDate(n.Value, vars); p.IsValid() && !pos.IsValid() {
				pos = p
			}
			return false
		case *ast.Ident:
			if p, ok := vars[n.Name]; ok {
				pos = p
			}
		}
		return true
	})
	return pos
}
