package gateway

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

// TestKeysAndDigests pins the strings built without fmt to their fmt form.
func TestKeysAndDigests(t *testing.T) {
	for _, out := range []string{"x", "payment sent", strings.Repeat("é", 5000)} {
		sum := sha256.Sum256([]byte(out))
		if got, want := outputDigest(out), fmt.Sprintf("sha256:%x (%d bytes)", sum, len(out)); got != want {
			t.Errorf("outputDigest = %q, want %q", got, want)
		}
	}
}
