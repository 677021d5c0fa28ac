// Checks of the container files that can run without a Docker engine (none
// runs where this project is built and tested): base images pinned to a
// version, a non-root user in the final image, every published port bound
// to 127.0.0.1 and none defaulting to a port a local PostgreSQL holds.
package intentplane_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeFile is the part of a compose file these checks read.
type composeFile struct {
	Services map[string]struct {
		Image string   `yaml:"image"`
		Ports []string `yaml:"ports"`
		User  string   `yaml:"user"`
	} `yaml:"services"`
}

// pinnedImage is IMAGE:TAG where TAG names a version (a digit in it), not
// latest; an image built by the compose file itself (":local") passes, and
// so does a distroless image whose name carries its Debian release
// (static-debian12:nonroot), which is how distroless versions its images.
var pinnedImage = regexp.MustCompile(`^(?:[a-z0-9./_-]+:(?:local|[a-z0-9._-]*[0-9][a-z0-9._-]*)|gcr\.io/distroless/[a-z]+-debian[0-9]+:nonroot)(?:@sha256:[0-9a-f]{64})?$`)

// hostPort is 127.0.0.1:PORT:CONTAINER, PORT possibly ${VAR:-DEFAULT}.
var hostPort = regexp.MustCompile(`^127\.0\.0\.1:(?:(\d+)|\$\{[A-Z_]+:-(\d+)\}):\d+$`)

func TestComposeFiles(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"deploy/docker-compose.yml", "examples/odoo/docker-compose.yml"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c composeFile
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(c.Services) == 0 {
			t.Fatalf("%s: no services read; the check is not looking at the file", file)
		}
		for name, s := range c.Services {
			if s.Image != "" && !pinnedImage.MatchString(s.Image) {
				t.Errorf("%s: service %s: image %q is not pinned to a version", file, name, s.Image)
			}
			if s.User == "root" || s.User == "0" {
				t.Errorf("%s: service %s runs as root", file, name)
			}
			for _, p := range s.Ports {
				m := hostPort.FindStringSubmatch(p)
				if m == nil {
					t.Errorf("%s: service %s: port %q is not bound to 127.0.0.1", file, name, p)
					continue
				}
				if port := m[1] + m[2]; port == "5432" {
					t.Errorf("%s: service %s: host port %s clashes with a local PostgreSQL by default", file, name, port)
				}
			}
		}
	}
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	f, err := os.Open("deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var froms []string
	user := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			froms = append(froms, fields[1])
			user = "" // USER applies per stage
		case "USER":
			user = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(froms) == 0 {
		t.Fatal("no FROM line read")
	}
	for _, img := range froms {
		if !pinnedImage.MatchString(img) {
			t.Errorf("FROM %s: not pinned to a version", img)
		}
	}
	final := froms[len(froms)-1]
	if user == "" && !strings.HasSuffix(final, ":nonroot") {
		t.Errorf("the final stage (%s) sets no USER and is not a nonroot image", final)
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "0" || uid == "root" {
		t.Errorf("the final stage runs as %s", user)
	}
}
