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
	// Name names the subtest: the major version the server announced and
	// the transport ("17-xmlrpc", "19-json2").
	Name string
	// Major is the major version the server announced (common.version).
	Major int
	// Transport is the connector's transport the test runs over, as
	// odoo.Config.Transport spells it: TransportXMLRPC, or TransportJSON2
	// (Odoo 19 and later, where EachReal runs each test over both);
	// "" (automatic) where a caller built the RealServer itself.
	Transport string
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

// The transports as odoo.Config.Transport spells them (odootest must not
// import odoo, whose tests import it).
const (
	TransportXMLRPC = "xmlrpc"
	TransportJSON2  = "json2"
)

// transports returns the transports a test runs over on Odoo major:
// XML-RPC, and from 19 on JSON-2 as well.
func transports(major int) []string {
	if major >= 19 {
		return []string{TransportJSON2, TransportXMLRPC}
	}
	return []string{TransportXMLRPC}
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

// realRun is one run of a real-Odoo test: a server over one transport, or
// the error that names a server that cannot run.
type realRun struct {
	s   RealServer
	err error
}

// realRuns lists the runs EachReal and EachRealB make: per server the
// environment names (a URL named twice once), per transport. A server
// that cannot be asked its version, or announces another than its
// variable's suffix, is one run with an error.
func realRuns() []realRun {
	master := os.Getenv("ODOO_MASTER_PASSWORD")
	seen := map[string]bool{}
	var out []realRun
	for _, v := range realVars() {
		url := strings.TrimRight(os.Getenv(v.url), "/")
		if url == "" || master == "" || seen[url] {
			continue
		}
		seen[url] = true
		s := RealServer{URL: url, Master: master, TemplateDB: os.Getenv(v.tpl), TemplatePassword: os.Getenv("ODOO_TEMPLATE_PASSWORD")}
		major, err := announced(url)
		if err == nil && v.major != 0 && major != v.major {
			err = fmt.Errorf("announces Odoo %d, not %d", major, v.major)
		}
		if err != nil {
			s.Name = v.url
			out = append(out, realRun{s: s, err: fmt.Errorf("%s=%s: %w", v.url, url, err)})
			continue
		}
		s.Major = major
		for _, tr := range transports(major) {
			s.Name, s.Transport = fmt.Sprintf("%d-%s", major, tr), tr
			out = append(out, realRun{s: s})
		}
	}
	return out
}

// noReal is the skip message without a real Odoo.
const noReal = "no real Odoo: set ODOO_URL (e.g. http://127.0.0.1:8069), or ODOO_URL_17, ODOO_URL_18 and ODOO_URL_19, and ODOO_MASTER_PASSWORD " +
	"to run the real-Odoo tests against running servers (examples/odoo/docker-compose.yml starts one, or odoo/dockertest); " +
	"they create and drop databases named intentplane_test_*"

// EachReal runs f as a subtest per real Odoo the environment names and
// per transport, named by the version each announces and the transport
// ("17-xmlrpc", "19-json2", "19-xmlrpc"): ODOO_URL (with
// ODOO_TEMPLATE_DB), and ODOO_URL_17, ODOO_URL_18 and ODOO_URL_19 (with
// ODOO_TEMPLATE_DB_17 and so on); all share ODOO_MASTER_PASSWORD and
// ODOO_TEMPLATE_PASSWORD. On Odoo 19 and later f runs over JSON-2 and
// over XML-RPC, before them over XML-RPC only (RealServer.Transport). A
// URL named twice runs once. A server whose announced version is not its
// variable's suffix, or that cannot be asked, fails its subtest. Without
// any (or without the master password) it skips t. Such tests create and
// drop databases named intentplane_test_*.
func EachReal(t *testing.T, f func(t *testing.T, s RealServer)) {
	t.Helper()
	eachReal(t, f)
}

// EachRealB is EachReal for a benchmark: f runs as a sub-benchmark per
// real Odoo and transport.
func EachRealB(b *testing.B, f func(b *testing.B, s RealServer)) {
	b.Helper()
	eachReal(b, f)
}

// eachReal is EachReal for a test or a benchmark.
func eachReal[T interface {
	testing.TB
	Run(name string, f func(T)) bool
}](tb T, f func(T, RealServer)) {
	tb.Helper()
	runs := realRuns()
	if len(runs) == 0 {
		tb.Skip(noReal)
	}
	for _, r := range runs {
		tb.Run(r.s.Name, func(tb T) {
			if r.err != nil {
				tb.Fatal(r.err)
			}
			f(tb, r.s)
		})
	}
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
