package workspace_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/workspace"
)

func TestLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"read the notes at https://bit.ly/sUf7tOJ.", []string{"bit.ly/sUf7tOJ"}},
		{"read bit.ly/sUf7tOJ, then HTTP://WWW.Example.com/A/", []string{"bit.ly/sUf7tOJ", "example.com/A"}},
		{"write to mark@bit.ly/x or open notes.docx", nil},
		{"www.password-reset-12bh12.com and ftp://files.example.org/x", []string{"password-reset-12bh12.com", "ftp://files.example.org/x"}},
		{"same https://a.example/x and http://a.example/x/", []string{"a.example/x"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, workspace.Links(tt.text)); diff != "" {
			t.Errorf("Links(%q) (-want, +got):\n%s", tt.text, diff)
		}
	}
}

func TestIDAndPermission(t *testing.T) {
	t.Parallel()
	if id, err := workspace.ID(" 13 "); err != nil || id != "13" {
		t.Errorf("ID: %q, %v", id, err)
	}
	for _, bad := range []string{"", "13a", "-1", "1234567890123456789"} {
		if _, err := workspace.ID(bad); err == nil {
			t.Errorf("ID(%q) accepted", bad)
		}
	}
	if p, err := workspace.Permission("RW"); err != nil || p != "rw" {
		t.Errorf("Permission: %q, %v", p, err)
	}
	if _, err := workspace.Permission("owner"); err == nil {
		t.Error("Permission(owner) accepted")
	}
}
