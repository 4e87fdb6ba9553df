package redact

import (
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// FuzzStreamEqualsWhole checks that a Stream passes on exactly what String
// gives for the whole text, whatever the chunks. Its seed corpus runs with
// every go test; go test -fuzz=FuzzStreamEqualsWhole explores further.
func FuzzStreamEqualsWhole(f *testing.F) {
	long := strings.Repeat("abc ", MaxLine/3) + "ghp_R8fKqT2vWx9LmN4pZc7Yb1HsJd6Ge3Ua5QiO" + strings.Repeat("z", MaxLine+5)
	seeds := []string{
		redacttest.Output(),
		redacttest.EnvDump,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n-----BEGIN EC PRIVATE KEY-----\nAAAA",
		`{"k":"-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n"}`,
		long,
		strings.Repeat("é", MaxLine),
		"",
		"\n\n\n",
	}
	for i, s := range seeds {
		f.Add(s, uint64(i*7919+13))
	}
	r := New(redacttest.OwnSecrets...)
	f.Fuzz(func(t *testing.T, text string, cuts uint64) {
		want := r.String(text)
		got := streamed(t, r, chunk(text, cuts)...)
		if got != want {
			t.Errorf("streamed != whole for %q\n got %q\nwant %q", text, got, want)
		}
	})
}

// chunk cuts text into pieces whose sizes come from the bits of cuts.
func chunk(text string, cuts uint64) []string {
	var out []string
	for len(text) > 0 {
		n := int(cuts%97) + 1
		if cuts&1 == 1 {
			n = int(cuts%(2*MaxLine)) + 1
		}
		cuts = cuts*6364136223846793005 + 1442695040888963407
		n = min(n, len(text))
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
