// Command dockertest runs a command against a throwaway Odoo 17 in Docker:
// it starts PostgreSQL 15 and Odoo 17 containers (Odoo bound to
// 127.0.0.1 on a free port), waits until Odoo answers, runs the command
// with ODOO_URL and ODOO_MASTER_PASSWORD set, and removes the containers.
// It is its own module, so that dockertest and its dependencies stay out
// of the module graph of intentplane's users:
//
//	cd odoo/dockertest && go run . go test -C ../.. ./odoo/ -run RealOdoo -v
//
// Without Docker it says so and exits 2.
package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// master is the odoo:17 image's default master password, for a
// throwaway server bound to 127.0.0.1.
const master = "admin"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dockertest command [args...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	pool, err := dockertest.NewPool("")
	if err == nil {
		err = pool.Client.Ping()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: Docker is not available (%v)\n", err)
		return 2
	}
	pool.MaxWait = 3 * time.Minute
	suffix := fmt.Sprint(time.Now().UnixNano())
	net, err := pool.CreateNetwork("intentplane-odoo-" + suffix)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: creating a Docker network: %v\n", err)
		return 1
	}
	defer net.Close()
	pg, err := pool.RunWithOptions(&dockertest.RunOptions{
		Name: "intentplane-pg-" + suffix, Repository: "postgres", Tag: "15", Networks: []*dockertest.Network{net},
		Env: []string{"POSTGRES_USER=odoo", "POSTGRES_PASSWORD=odoo", "POSTGRES_DB=postgres"},
	}, func(hc *dc.HostConfig) { hc.AutoRemove = true })
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: starting postgres:15: %v\n", err)
		return 1
	}
	defer func() { _ = pool.Purge(pg) }()
	od, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: "odoo", Tag: "17", Networks: []*dockertest.Network{net},
		Env:          []string{"HOST=intentplane-pg-" + suffix, "USER=odoo", "PASSWORD=odoo"},
		ExposedPorts: []string{"8069/tcp"},
		PortBindings: map[dc.Port][]dc.PortBinding{"8069/tcp": {{HostIP: "127.0.0.1", HostPort: ""}}},
	}, func(hc *dc.HostConfig) { hc.AutoRemove = true })
	if err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: starting odoo:17: %v\n", err)
		return 1
	}
	defer func() { _ = pool.Purge(od) }()
	url := "http://127.0.0.1:" + od.GetPort("8069/tcp")
	if err := pool.Retry(func() error { return answers(url) }); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: odoo:17 did not answer: %v\n", err)
		return 1
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "ODOO_URL="+url, "ODOO_MASTER_PASSWORD="+master)
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "dockertest: %v\n", err)
		return 1
	}
	return 0
}

// answers calls Odoo's /xmlrpc/2/common version(), which needs no login.
func answers(url string) error {
	body := []byte(`<?xml version="1.0"?><methodCall><methodName>version</methodName><params></params></methodCall>`)
	resp, err := http.Post(url+"/xmlrpc/2/common", "text/xml", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}
