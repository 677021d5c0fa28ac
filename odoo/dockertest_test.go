package odoo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/intentplane/intentplane/odoo"
)

// dockerMaster is the master password of the Odoo containers started
// here: the odoo:17 image's default, for a throwaway server bound to
// 127.0.0.1.
const dockerMaster = "admin"

var docker struct {
	once   sync.Once
	url    string
	reason string // why there is no container
	pool   *dockertest.Pool
	res    []*dockertest.Resource
	net    *dockertest.Network
}

// dockerOdoo starts PostgreSQL 15 and Odoo 17 containers (once per test
// binary; purged when the binary's last test using them ends) and
// returns Odoo's URL, or "" and the reason Docker cannot be used.
func dockerOdoo(t *testing.T) (string, string) {
	docker.once.Do(func() {
		pool, err := dockertest.NewPool("")
		if err == nil {
			err = pool.Client.Ping()
		}
		if err != nil {
			docker.reason = fmt.Sprintf("Docker is not available (%v)", err)
			return
		}
		pool.MaxWait = 3 * time.Minute
		docker.pool = pool
		suffix := fmt.Sprint(time.Now().UnixNano())
		if docker.net, err = pool.CreateNetwork("intentplane-odoo-" + suffix); err != nil {
			docker.reason = fmt.Sprintf("creating a Docker network: %v", err)
			return
		}
		pg, err := pool.RunWithOptions(&dockertest.RunOptions{
			Name: "intentplane-pg-" + suffix, Repository: "postgres", Tag: "15", Networks: []*dockertest.Network{docker.net},
			Env: []string{"POSTGRES_USER=odoo", "POSTGRES_PASSWORD=odoo", "POSTGRES_DB=postgres"},
		}, func(hc *dc.HostConfig) { hc.AutoRemove = true })
		if err != nil {
			docker.reason = fmt.Sprintf("starting postgres:15: %v", err)
			return
		}
		docker.res = append(docker.res, pg)
		od, err := pool.RunWithOptions(&dockertest.RunOptions{
			Repository: "odoo", Tag: "17", Networks: []*dockertest.Network{docker.net},
			Env:          []string{"HOST=intentplane-pg-" + suffix, "USER=odoo", "PASSWORD=odoo"},
			ExposedPorts: []string{"8069/tcp"},
			PortBindings: map[dc.Port][]dc.PortBinding{"8069/tcp": {{HostIP: "127.0.0.1", HostPort: ""}}},
		}, func(hc *dc.HostConfig) { hc.AutoRemove = true })
		if err != nil {
			docker.reason = fmt.Sprintf("starting odoo:17: %v", err)
			return
		}
		docker.res = append(docker.res, od)
		url := "http://127.0.0.1:" + od.GetPort("8069/tcp")
		a, _ := odoo.NewAdmin(odoo.AdminConfig{URL: url, DB: "postgres"})
		if err := pool.Retry(func() error { _, err := a.DatabaseExists(context.Background()); return err }); err != nil {
			docker.reason = fmt.Sprintf("odoo:17 did not answer: %v", err)
			return
		}
		docker.url = url
	})
	return docker.url, docker.reason
}

// purgeDocker removes the containers; TestMain calls it.
func purgeDocker() {
	if docker.pool == nil {
		return
	}
	for _, r := range docker.res {
		_ = docker.pool.Purge(r)
	}
	if docker.net != nil {
		_ = docker.net.Close()
	}
}
