package odootest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RealServer is a real Odoo the environment names, for the tests that
// run against one (named TestRealOdoo*, in ./odoo, ./cmd/intentplane-mcp
// and ./cmd/intentplane).
type RealServer struct {
	// Name names the subtest: the major version the server announced
	// ("18").
	Name string
	// Major is the major version the server announced (common.version).
	Major int
	// URL is its base URL, e.g. http://127.0.0.1:8069.
	URL string
	// Master is its master password (ODOO_MASTER_PASSWORD).
	Master string
	// TemplateDB names a database with account installed and no demo
	// data, which tests copy (a second) instead of creating one (minutes
	// on a busy host); "" for none. TemplatePassword is its
	// administrator's password (login admin).
	TemplateDB, TemplatePassword string
}

// realVars are the environment variables naming a real Odoo: ODOO_URL
// (and ODOO_TEMPLATE_DB), whatever its version, then one per version,
// ODOO_URL_17 (and ODOO_TEMPLATE_DB_17) and so on, whose server must
// announce that version.
func realVars() []struct {
	url, tpl string
	major    int
} {
	out := []struct {
		url, tpl string
		major    int
	}{{"ODOO_URL", "ODOO_TEMPLATE_DB", 0}}
	for _, v := range Versions {
		out = append(out, struct {
			url, tpl string
			major    int
		}{fmt.Sprintf("ODOO_URL_%d", v), fmt.Sprintf("ODOO_TEMPLATE_DB_%d", v), v})
	}
	return out
}

// EachReal runs f as a subtest per real Odoo the environment names, named
// by the version each announces: ODOO_URL (with ODOO_TEMPLATE_DB), and
// ODOO_URL_17, ODOO_URL_18 and ODOO_URL_19 (with ODOO_TEMPLATE_DB_17 and
// so on); all share ODOO_MASTER_PASSWORD and ODOO_TEMPLATE_PASSWORD. A
// URL named twice runs once. A server whose announced version is not its
// variable's suffix, or that cannot be asked, fails its subtest. Without
// any (or without the master password) it skips t. Such tests create and
// drop databases named intentplane_test_*.
func EachReal(t *testing.T, f func(t *testing.T, s RealServer)) {
	t.Helper()
	master := os.Getenv("ODOO_MASTER_PASSWORD")
	seen := map[string]bool{}
	ran := false
	for _, v := range realVars() {
		url := strings.TrimRight(os.Getenv(v.url), "/")
		if url == "" || master == "" || seen[url] {
			continue
		}
		seen[url], ran = true, true
		s := RealServer{URL: url, Master: master, TemplateDB: os.Getenv(v.tpl), TemplatePassword: os.Getenv("ODOO_TEMPLATE_PASSWORD")}
		major, err := announced(url)
		name := strconv.Itoa(major)
		if err != nil {
			name = v.url
		}
		t.Run(name, func(t *testing.T) {
			if err != nil {
				t.Fatalf("%s=%s: %v", v.url, url, err)
			}
			if v.major != 0 && major != v.major {
				t.Fatalf("%s=%s announces Odoo %d, not %d", v.url, url, major, v.major)
			}
			s.Name, s.Major = name, major
			f(t, s)
		})
	}
	if !ran {
		t.Skip("no real Odoo: set ODOO_URL (e.g. http://127.0.0.1:8069), or ODOO_URL_17, ODOO_URL_18 and ODOO_URL_19, and ODOO_MASTER_PASSWORD " +
			"to run the real-Odoo tests against running servers (examples/odoo/docker-compose.yml starts one, or odoo/dockertest); " +
			"they create and drop databases named intentplane_test_*")
	}
}

// Real returns the first real Odoo the environment names (see
// EachReal), without asking its version, for a benchmark; without one it
// skips tb.
func Real(tb testing.TB) RealServer {
	tb.Helper()
	master := os.Getenv("ODOO_MASTER_PASSWORD")
	for _, v := range realVars() {
		if url := strings.TrimRight(os.Getenv(v.url), "/"); url != "" && master != "" {
			return RealServer{Name: v.url, Major: v.major, URL: url, Master: master, TemplateDB: os.Getenv(v.tpl),
				TemplatePassword: os.Getenv("ODOO_TEMPLATE_PASSWORD")}
		}
	}
	tb.Skip("no real Odoo: set ODOO_URL (or ODOO_URL_17, _18, _19) and ODOO_MASTER_PASSWORD")
	return RealServer{}
}

// RealOf returns the real Odoo that ODOO_URL_<m> names for the first of
// majors configured (with its ODOO_TEMPLATE_DB_<m>), else the one ODOO_URL
// names, whose version the caller must check; without either it skips
// tb. It does not ask the server its version.
func RealOf(tb testing.TB, majors ...int) RealServer {
	tb.Helper()
	master := os.Getenv("ODOO_MASTER_PASSWORD")
	for _, m := range majors {
		if url := strings.TrimRight(os.Getenv(fmt.Sprintf("ODOO_URL_%d", m)), "/"); url != "" && master != "" {
			return RealServer{Name: strconv.Itoa(m), Major: m, URL: url, Master: master, TemplateDB: os.Getenv(fmt.Sprintf("ODOO_TEMPLATE_DB_%d", m)),
				TemplatePassword: os.Getenv("ODOO_TEMPLATE_PASSWORD")}
		}
	}
	if url := strings.TrimRight(os.Getenv("ODOO_URL"), "/"); url != "" && master != "" {
		return RealServer{Name: "ODOO_URL", URL: url, Master: master, TemplateDB: os.Getenv("ODOO_TEMPLATE_DB"),
			TemplatePassword: os.Getenv("ODOO_TEMPLATE_PASSWORD")}
	}
	tb.Skipf("no real Odoo %v: set ODOO_URL_<version> (or ODOO_URL) and ODOO_MASTER_PASSWORD", majors)
	return RealServer{}
}

// majorRE finds the first element of server_version_info in
// common.version's XML-RPC answer: an int, or a string such as "saas~18".
var majorRE = regexp.MustCompile(`server_version_info</name>\s*<value>\s*<array>\s*<data>\s*<value>\s*<(?:int|i4|string)>(?:saas~)?(\d+)`)

// announced asks the server at url its major version (common.version,
// no login).
func announced(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := `<?xml version="1.0"?><methodCall><methodName>version</methodName><params></params></methodCall>`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/xmlrpc/2/common", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "text/xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return 0, err
	}
	m := majorRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("common.version answered no server_version_info: %.200q", out)
	}
	return strconv.Atoi(string(m[1]))
}
