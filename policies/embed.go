package policies

import (
	"embed"
	"io/fs"
)

// files holds every pack directory. A pattern that matches nothing is a
// build error, so each pattern is matched at least by the demo pack.
//
//go:embed */*.cedar */*.cedarschema */tests/*.json
var files embed.FS

// Packs returns the names of the embedded packs (the directories holding a
// policy), sorted.
func Packs() []string {
	entries, _ := fs.ReadDir(files, ".") // cannot fail on an embed.FS root
	var names []string
	for _, de := range entries {
		if de.IsDir() {
			names = append(names, de.Name())
		}
	}
	return names
}

// Pack returns the file system of one pack, rooted at its directory: its
// *.cedar files and schema at the root and its corpus under tests/. For an
// unknown name it returns a *fs.PathError wrapping fs.ErrNotExist, and for
// a name that is not a single path element one wrapping fs.ErrInvalid.
func Pack(name string) (fs.FS, error) {
	if !fs.ValidPath(name) || name == "." || hasSlash(name) {
		return nil, &fs.PathError{Op: "pack", Path: name, Err: fs.ErrInvalid}
	}
	if st, err := fs.Stat(files, name); err != nil || !st.IsDir() {
		return nil, &fs.PathError{Op: "pack", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Sub(files, name)
}

func hasSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}
