package admin

import (
	"net"
	"net/http"
	"strings"
)

// HostCheck returns h behind a check of each request's Host header: a
// request whose host (its port aside) is not one of hosts is answered 421
// Misdirected Request and never reaches h. A page on another site that a
// browser reaches through DNS rebinding (evil.example resolving to
// 127.0.0.1) names its own site in Host, so the operator's browser cannot
// be made to read /metrics or /healthz for it. hosts are compared
// without case; Hosts lists those of a listener.
func HostCheck(h http.Handler, hosts []string) http.Handler {
	allowed := make(map[string]bool, len(hosts))
	for _, host := range hosts {
		allowed[canonicalHost(host)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[canonicalHost(r.Host)] {
			http.Error(w, "misdirected request: this listener answers only to its own address", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// canonicalHost is host (a Host header, or a host with or without a port)
// without its port and brackets, in lower case.
func canonicalHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// Hosts returns the host names that name the listener at addr, with
// extra (names the operator gives, such as a DNS name of the machine):
// addr's IP; for a loopback address also "localhost", 127.0.0.1 and ::1;
// for an unspecified address (0.0.0.0, ::), every address of the
// machine's interfaces and the loopback names.
func Hosts(addr net.Addr, extra ...string) []string {
	out := append([]string(nil), extra...)
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return append(out, canonicalHost(addr.String()))
	}
	out = append(out, tcp.IP.String())
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		out = append(out, "localhost", "127.0.0.1", "::1")
	}
	if tcp.IP.IsUnspecified() {
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				out = append(out, n.IP.String())
			}
		}
	}
	return out
}
