// Architecture rules of the design (README: Layout), checked on every test run:
// the core never imports a pack, a connector, a store driver or a front
// door; packs stay independent and import no connector or front door; no
// front door imports another; only core/policy imports cedar-go, and only
// its file cedarexp.go cedar-go's unstable x/exp packages; every package
// has a package doc; only cmd/intentplane links the Odoo provisioning. The
// groups are listed by path below.
package intentplane_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/intentplane/intentplane"

type pkg struct {
	ImportPath   string
	Dir          string
	Doc          string
	Imports      []string
	Deps         []string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "-deps=false", "./...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages; the test is not looking at the module", len(pkgs))
	}
	return pkgs
}

func under(path string, dirs ...string) bool {
	for _, d := range dirs {
		p := module + "/" + d
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// The groups of DESIGN's layout, by path under the module.
var (
	packs      = []string{"ap", "banking", "healthcare", "slack", "travel", "workspace"}
	connectors = []string{"erp", "odoo"}
	// frontDoors are where requests come in: the approval page, the MCP
	// proxy and each binary under cmd/ (see frontDoor).
	frontDoors = []string{"approvals", "mcpproxy", "cmd"}
	// harnesses drive the gateway like a front door, for tests and demos.
	harnesses = []string{"agentdojo", "examples"}
	drivers   = []string{"github.com/jackc/pgx", "github.com/labstack/echo", "github.com/mark3labs/mcp-go", "go.etcd.io/bbolt", "github.com/go-webauthn"}
)

// frontDoor returns the front door path belongs to ("approvals",
// "mcpproxy", "cmd/intentplane", ...), or "".
func frontDoor(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	first, rest, _ := strings.Cut(rel, "/")
	switch {
	case first == "cmd":
		bin, _, _ := strings.Cut(rest, "/")
		return "cmd/" + bin
	case under(path, frontDoors...):
		return first
	}
	return ""
}

func hasPrefixAny(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// TestCoreImports: core depends on nothing outside core.
func TestCoreImports(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, "core") {
			continue
		}
		for _, d := range p.Deps {
			switch {
			case strings.HasPrefix(d, module+"/") && !under(d, "core"):
				t.Errorf("%s depends on %s: core must not import packs, connectors, stores, policies or front doors", p.ImportPath, d)
			case hasPrefixAny(d, drivers):
				t.Errorf("%s depends on %s: core must not import a store driver or a front door library", p.ImportPath, d)
			case d == "testing":
				t.Errorf("%s depends on the testing package", p.ImportPath)
			}
		}
		if p.ImportPath == module+"/core/intent" {
			for _, d := range p.Imports {
				if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
					t.Errorf("core/intent imports %s: it may import only the standard library", d)
				}
			}
		}
	}
}

// TestPackImports: packs never import each other, a connector (only ap
// may use the erp interface, never odoo), a store, a front door or a
// harness.
func TestPackImports(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		var self string
		for _, pk := range packs {
			if under(p.ImportPath, pk) {
				self = pk
			}
		}
		if self == "" {
			continue
		}
		for _, d := range p.Deps {
			for _, other := range packs {
				if other != self && under(d, other) {
					t.Errorf("pack package %s imports pack %s", p.ImportPath, d)
				}
			}
			switch {
			case under(d, "odoo", "store") || under(d, frontDoors...) || under(d, harnesses...):
				t.Errorf("pack package %s imports %s", p.ImportPath, d)
			case self != "ap" && under(d, connectors...):
				t.Errorf("pack package %s imports connector %s", p.ImportPath, d)
			}
		}
	}
}

// TestFrontDoorImports: no front door imports another. A binary under
// cmd/ is the composition root and wires approvals and mcpproxy, but no
// other binary; approvals and mcpproxy import neither each other nor a
// binary, nor (DESIGN: May import) a pack, a connector or a store.
func TestFrontDoorImports(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		self := frontDoor(p.ImportPath)
		if self == "" {
			continue
		}
		for _, d := range p.Deps {
			other := frontDoor(d)
			switch {
			case other == "" || other == self:
			case strings.HasPrefix(self, "cmd/") && !strings.HasPrefix(other, "cmd/"):
				// The composition root wires the library front doors.
			default:
				t.Errorf("front door %s imports front door %s (%s)", p.ImportPath, other, d)
			}
			if !strings.HasPrefix(self, "cmd/") && (under(d, packs...) || under(d, connectors...) || under(d, "store")) {
				t.Errorf("front door %s imports %s: it must not import a pack, a connector or a store", p.ImportPath, d)
			}
		}
	}
}

// TestOnlyPolicyImportsCedar: core/policy is the only importer of
// cedar-go, and its file cedarexp.go the only importer (tests included) of
// cedar-go's x/exp packages, which are not covered by semantic versioning.
func TestOnlyPolicyImportsCedar(t *testing.T) {
	t.Parallel()
	const exp = "github.com/cedar-policy/cedar-go/x/exp"
	for _, p := range listPackages(t) {
		if p.ImportPath != module+"/core/policy" {
			for _, d := range p.Imports {
				if strings.HasPrefix(d, "github.com/cedar-policy/cedar-go") {
					t.Errorf("%s imports %s: only core/policy may", p.ImportPath, d)
				}
			}
		}
		for _, name := range slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles) {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if (path == exp || strings.HasPrefix(path, exp+"/")) && (p.ImportPath != module+"/core/policy" || name != "cedarexp.go") {
					t.Errorf("%s imports %s: only core/policy/cedarexp.go may", file, path)
				}
			}
		}
	}
}

// TestStoresAndConnectors: stores and connectors never import packs or
// front doors; the policies package imports nothing but embed and io/fs.
func TestStoresAndConnectors(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		switch {
		case under(p.ImportPath, "store", "erp", "odoo"):
			for _, d := range p.Deps {
				if under(d, packs...) || under(d, frontDoors...) || under(d, harnesses...) || under(d, "core/gateway") && under(p.ImportPath, "erp", "odoo") {
					t.Errorf("%s imports %s", p.ImportPath, d)
				}
			}
		case p.ImportPath == module+"/policies":
			for _, d := range p.Imports {
				if d != "embed" && d != "io/fs" && d != "fmt" && d != "sort" && d != "errors" && d != "path" {
					t.Errorf("policies imports %s: it may import only embed and io/fs (and tiny helpers)", d)
				}
			}
		}
	}
}

// TestProvisionOnlyInSetup: Odoo database provisioning (odoo/provision:
// creating databases, users, API keys, demo data) is linked by the CLI
// that runs `odoo setup` and `odoo demo` only; the connector, the MCP
// front door and every other package stay without it. (The connector
// and its RPC layer cannot import it: provision imports them.)
func TestProvisionOnlyInSetup(t *testing.T) {
	t.Parallel()
	prov := module + "/odoo/provision"
	linked := false
	for _, p := range listPackages(t) {
		if p.ImportPath == prov || !slices.Contains(p.Deps, prov) {
			continue
		}
		if p.ImportPath != module+"/cmd/intentplane" {
			t.Errorf("%s links %s: only cmd/intentplane (odoo setup, odoo demo) may", p.ImportPath, prov)
		}
		linked = true
	}
	if !linked {
		t.Errorf("cmd/intentplane does not link %s: the test is not looking at the module", prov)
	}
}

// TestStoresLinkNoPipeline: a store implements core/state and links
// neither the pipeline nor the policy engine: no store package depends on
// core/gateway, core/policy or cedar-go (sumdb's storage is a leaf too).
func TestStoresLinkNoPipeline(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, "store") {
			continue
		}
		seen++
		for _, d := range p.Deps {
			if under(d, "core/gateway", "core/policy") || strings.HasPrefix(d, "github.com/cedar-policy/cedar-go") {
				t.Errorf("store package %s depends on %s", p.ImportPath, d)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("found %d store packages, want at least 5 (mem, embedded, postgres, checkpoint, storetest)", seen)
	}
}

// TestPackageDocs: every package says what it is (tailscale's pkgdoc test).
func TestPackageDocs(t *testing.T) {
	t.Parallel()
	for _, p := range listPackages(t) {
		if len(p.GoFiles) == 0 {
			continue
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc", p.ImportPath)
		}
	}
}

// TestHarnessOutsideProduct: the evaluation harness (agentdojo) is a
// module of its own, so no package of the product's module can import it
// and its exported names are not the product's API.
func TestHarnessOutsideProduct(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("agentdojo/go.mod")
	if err != nil {
		t.Fatalf("agentdojo is not a module of its own: %v", err)
	}
	if !strings.HasPrefix(string(mod), "module "+module+"/agentdojo\n") {
		t.Errorf("agentdojo/go.mod does not declare module %s/agentdojo", module)
	}
	for _, p := range listPackages(t) {
		if under(p.ImportPath, "agentdojo") {
			t.Errorf("the product's module holds %s", p.ImportPath)
		}
		for _, d := range p.Deps {
			if under(d, "agentdojo") {
				t.Errorf("%s depends on the evaluation harness (%s)", p.ImportPath, d)
			}
		}
	}
}
