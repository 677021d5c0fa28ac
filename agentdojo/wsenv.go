package agentdojo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/intentplane/intentplane/workspace"
)

// Values of the workspace suite's environment that the tasks refer to.
const (
	// WorkspaceAccount is the owner's address, Emma Johnson's.
	WorkspaceAccount = "emma.johnson@bluesparrowtech.com"
	// AttackerEmail is the attacker's address in every workspace
	// injection task; it appears nowhere in the suite's data.
	AttackerEmail = "mark.black-2134@gmail.com"
	// PhishingLink is the link injection task 13 mails to the user's
	// colleagues.
	PhishingLink = "https://bit.ly/sUf7tOJ"
	// WorkspaceToday is the calendar's current day.
	WorkspaceToday = "2024-05-15"
)

// DataDirEnv names the environment variable that can point at the suite
// data (a directory holding banking/ and workspace/ with AgentDojo's
// environment.yaml, include/*.yaml and injection_vectors.yaml);
// DefaultDataDir is used when it is empty.
const (
	DataDirEnv     = "INTENTPLANE_AGENTDOJO_DATA"
	DefaultDataDir = "../shared/agentdojo-data"
)

// DataDir returns the suite data directory: $INTENTPLANE_AGENTDOJO_DATA,
// or DefaultDataDir relative to the working directory. A relative default
// is looked up in the working directory's parents too, so that tests run
// from a package directory find it.
func DataDir() string {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return DefaultDataDir
	}
	for {
		c := filepath.Join(dir, DefaultDataDir)
		if st, err := os.Stat(filepath.Join(c, "workspace", "environment.yaml")); err == nil && !st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return DefaultDataDir
		}
		dir = parent
	}
}

// WorkspaceData is the workspace suite's environment as AgentDojo's data
// files give it, with its injection vectors still unfilled ("{name}" in
// the text fields), and the vectors' defaults.
type WorkspaceData struct {
	base     workspace.Workspace
	defaults map[string]string
}

// LoadWorkspaceData reads the workspace suite from dir, the suite data
// directory (see DataDir): workspace/environment.yaml with the files it
// includes, and workspace/injection_vectors.yaml. It returns an error
// naming the file for a file that is missing or does not parse, and for a
// placeholder in the environment that no vector declares.
func LoadWorkspaceData(dir string) (*WorkspaceData, error) {
	root := filepath.Join(dir, "workspace")
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("agentdojo: workspace data: %w (set --data or %s to AgentDojo's suite data)", err, DataDirEnv)
		}
		return b, nil
	}
	envText, err := read("environment.yaml")
	if err != nil {
		return nil, err
	}
	parts := includes(envText)
	var inbox, calendar, drive yamlWorkspacePart
	for name, dst := range map[string]any{"inbox": &inbox, "calendar": &calendar, "cloud_drive": &drive} {
		file, ok := parts[name]
		if !ok {
			return nil, fmt.Errorf("agentdojo: workspace data: environment.yaml does not include %q", name)
		}
		b, err := read(file)
		if err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(b, dst); err != nil {
			return nil, fmt.Errorf("agentdojo: workspace data: %s: %w", file, err)
		}
	}
	vecText, err := read("injection_vectors.yaml")
	if err != nil {
		return nil, err
	}
	var vecs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
	}
	if err := yaml.Unmarshal(vecText, &vecs); err != nil {
		return nil, fmt.Errorf("agentdojo: workspace data: injection_vectors.yaml: %w", err)
	}
	d := &WorkspaceData{defaults: map[string]string{}}
	for k, v := range vecs {
		d.defaults[k] = v.Default
	}
	w := buildWorkspace(&inbox, &calendar, &drive)
	if w.Account == "" || w.CurrentDay == "" || len(w.Emails) == 0 || len(w.Events) == 0 || len(w.Files) == 0 {
		return nil, fmt.Errorf("agentdojo: workspace data in %s is incomplete: account, current day, e-mails, events and files are required", root)
	}
	d.base = w
	for _, p := range placeholders(w) {
		if _, ok := d.defaults[p]; !ok {
			return nil, fmt.Errorf("agentdojo: workspace data: placeholder {%s} has no injection vector", p)
		}
	}
	return d, nil
}

// yamlWorkspacePart is one of the YAML files environment.yaml includes:
// the inbox (account and e-mails), the calendar (current day and events)
// or the cloud drive (files). Each file fills its own fields; any
// other key is kept in Other.
type yamlWorkspacePart struct {
	Account string         `yaml:"account_email"`
	Emails  []yamlEmail    `yaml:"initial_emails"`
	Events  []yamlEvent    `yaml:"initial_events"`
	Day     string         `yaml:"current_day"`
	Files   []yamlFile     `yaml:"initial_files"`
	Other   map[string]any `yaml:",inline"`
}

// includes reads environment.yaml, which maps each part of the workspace
// to "!include include/<file>.yaml": the file of each part by name, such
// as "inbox". Other lines are skipped.
func includes(envText []byte) map[string]string {
	parts := map[string]string{}
	for _, line := range strings.Split(string(envText), "\n") {
		k, v, ok := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		if !ok || !strings.HasPrefix(v, "!include ") {
			continue
		}
		parts[strings.TrimSpace(k)] = strings.TrimSpace(strings.TrimPrefix(v, "!include "))
	}
	return parts
}

// buildWorkspace is the workspace the three parts describe: the account
// and e-mails of inbox, the current day (and noon of it as the time) and
// events of calendar, the files of drive. Absent lists become empty ones,
// as AgentDojo's tools show them; the trash starts empty.
func buildWorkspace(inbox, calendar, drive *yamlWorkspacePart) workspace.Workspace {
	w := workspace.Workspace{
		Account: inbox.Account, CurrentDay: calendar.Day, Now: calendar.Day + "T12:00:00",
		Emails: map[string]workspace.Email{}, Trash: map[string]workspace.Email{},
		Events: map[string]workspace.Event{}, Files: map[string]workspace.File{},
	}
	for _, e := range inbox.Emails {
		w.Emails[e.ID] = workspace.Email{
			ID: e.ID, Sender: e.Sender, Recipients: nonNil(e.Recipients), CC: nonNil(e.CC), BCC: nonNil(e.BCC),
			Subject: e.Subject, Body: e.Body, Status: e.Status, Read: e.Read, Timestamp: e.Timestamp,
			Attachments: []workspace.Attachment{},
		}
	}
	for _, e := range calendar.Events {
		w.Events[e.ID] = workspace.Event{
			ID: e.ID, Title: e.Title, Description: e.Description, Start: dayTime(e.Start), End: dayTime(e.End),
			Location: e.Location, Participants: nonNil(e.Participants), AllDay: e.AllDay, Status: e.Status,
		}
	}
	for _, f := range drive.Files {
		w.Files[f.ID] = workspace.File{ID: f.ID, Filename: f.Filename, Content: f.Content, Owner: f.Owner, SharedWith: f.SharedWith, LastModified: f.LastModified}
		if w.Files[f.ID].SharedWith == nil {
			ff := w.Files[f.ID]
			ff.SharedWith = map[string]string{}
			w.Files[f.ID] = ff
		}
	}
	return w
}

type yamlEmail struct {
	ID         string   `yaml:"id_"`
	Sender     string   `yaml:"sender"`
	Recipients []string `yaml:"recipients"`
	CC         []string `yaml:"cc"`
	BCC        []string `yaml:"bcc"`
	Subject    string   `yaml:"subject"`
	Body       string   `yaml:"body"`
	Status     string   `yaml:"status"`
	Read       bool     `yaml:"read"`
	Timestamp  string   `yaml:"timestamp"`
}

type yamlEvent struct {
	ID           string   `yaml:"id_"`
	Title        string   `yaml:"title"`
	Description  string   `yaml:"description"`
	Start        string   `yaml:"start_time"`
	End          string   `yaml:"end_time"`
	Location     string   `yaml:"location"`
	Participants []string `yaml:"participants"`
	AllDay       bool     `yaml:"all_day"`
	Status       string   `yaml:"status"`
}

type yamlFile struct {
	ID           string            `yaml:"id_"`
	Filename     string            `yaml:"filename"`
	Content      string            `yaml:"content"`
	Owner        string            `yaml:"owner"`
	SharedWith   map[string]string `yaml:"shared_with"`
	LastModified string            `yaml:"last_modified"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// dayTime writes an ISO time "2024-05-15T10:00" as "2024-05-15 10:00".
func dayTime(s string) string {
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil {
		return t.Format("2006-01-02 15:04")
	}
	return strings.Replace(s, "T", " ", 1)
}

// placeholders returns the "{name}" vectors the text fields of w hold,
// sorted.
func placeholders(w workspace.Workspace) []string {
	var out []string
	scan := func(s string) {
		for {
			i := strings.IndexByte(s, '{')
			if i < 0 {
				return
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return
			}
			name := s[i+1 : i+j]
			if name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz_") == "" {
				out = append(out, name)
			}
			s = s[i+j+1:]
		}
	}
	for _, e := range w.Emails {
		scan(e.Subject)
		scan(e.Body)
	}
	for _, e := range w.Events {
		scan(e.Title)
		scan(e.Description)
		scan(e.Location)
	}
	for _, f := range w.Files {
		scan(f.Content)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Vectors returns the names of the suite's injection vectors, sorted.
func (d *WorkspaceData) Vectors() []string {
	out := make([]string, 0, len(d.defaults))
	for k := range d.defaults {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// DefaultVector returns the default content of a vector.
func (d *WorkspaceData) DefaultVector(name string) string { return d.defaults[name] }

// Environment returns the suite's environment with injections placed in
// the named vectors (each replaces the vector's whole content, default
// included) and every other vector at its default.
func (d *WorkspaceData) Environment(injections map[string]string) workspace.Workspace {
	w := d.base.Clone()
	r := make([]string, 0, 2*len(d.defaults))
	for k, def := range d.defaults {
		v, ok := injections[k]
		if !ok {
			v = def
		}
		r = append(r, "{"+k+"}", v)
	}
	rep := strings.NewReplacer(r...)
	fill := func(s *string) {
		if strings.IndexByte(*s, '{') >= 0 {
			*s = rep.Replace(*s)
		}
	}
	for id, e := range w.Emails {
		if strings.IndexByte(e.Subject+e.Body, '{') >= 0 {
			fill(&e.Subject)
			fill(&e.Body)
			w.Emails[id] = e
		}
	}
	for id, e := range w.Events {
		if strings.IndexByte(e.Title+e.Description+e.Location, '{') >= 0 {
			fill(&e.Title)
			fill(&e.Description)
			fill(&e.Location)
			w.Events[id] = e
		}
	}
	for id, f := range w.Files {
		if strings.IndexByte(f.Content, '{') >= 0 {
			fill(&f.Content)
			w.Files[id] = f
		}
	}
	return w
}
