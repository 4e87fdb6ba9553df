package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// typicalOutput is n bytes of what commands print most: journalctl and df.
func typicalOutput(n int) string {
	lines := []string{
		"Nov 24 10:02:11 web-1 sshd[812]: Accepted publickey for deploy from 10.0.4.7 port 52311 ssh2: ED25519 SHA256:Jx3mQ9vR2kL8pT5wZ1cN7bH4dF6gS0aY3eU8iO2qWxE",
		"Nov 24 10:02:11 web-1 systemd[1]: Started session-%d.scope - Session %d of User deploy.",
		"Nov 24 10:02:12 web-1 nginx[1022]: 10.0.4.%d - - [24/Nov/2026:10:02:12 +0000] \"GET /api/v1/orders?page=%d HTTP/1.1\" 200 5123 \"-\" \"curl/8.5.0\"",
		"Nov 24 10:02:13 web-1 kernel: [%d.567890] EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro",
		"Nov 24 10:02:14 web-1 app[2201]: level=info msg=\"request done\" request_id=9b2f6c1e-4d7a-4b8e-9f0a-1c2d3e4f5a6b duration=%dms auth=ok",
		"Filesystem      Size  Used Avail Use% Mounted on",
		"/dev/nvme0n1p%d  468G  201G  244G  46%% /",
		"tmpfs           3.9G  1.2M  3.9G   1%% /run",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		l := lines[i%len(lines)]
		if strings.Count(l, "%d") == 2 {
			fmt.Fprintf(&b, l+"\n", i, i)
		} else if strings.Contains(l, "%d") {
			fmt.Fprintf(&b, l+"\n", i)
		} else {
			b.WriteString(strings.ReplaceAll(l, "%%", "%") + "\n")
		}
	}
	return b.String()[:n]
}

func benchRedact(b *testing.B, text string) {
	r := New(redacttest.OwnSecrets...)
	r.String("warm up") // compile the rules outside the timing
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(text)
	}
}

// BenchmarkRedact is 64 KiB of ordinary command output with no secret.
func BenchmarkRedact(b *testing.B) { benchRedact(b, typicalOutput(64<<10)) }

// BenchmarkRedactSecrets is the same with the seed secrets mixed in.
func BenchmarkRedactSecrets(b *testing.B) {
	text := typicalOutput(32<<10) + redacttest.Output() + typicalOutput(32<<10-len(redacttest.Output()))
	benchRedact(b, text)
}

// BenchmarkStream is BenchmarkRedact through a Stream in 4 KiB writes.
func BenchmarkStream(b *testing.B) {
	text := typicalOutput(64 << 10)
	r := New(redacttest.OwnSecrets...)
	r.String("warm up")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s := r.NewStream(func(string) error { return nil })
		for i := 0; i < len(text); i += 4096 {
			_, _ = s.WriteString(text[i:min(len(text), i+4096)])
		}
		_ = s.Flush()
	}
}

func TestTypicalOutputIsLeftAlone(t *testing.T) {
	t.Parallel()
	text := typicalOutput(64 << 10)
	if got := New().String(text); got != text {
		for i := range got {
			if got[i] != text[i] {
				t.Fatalf("ordinary output changed at %d: %q", i, got[max(0, i-80):min(len(got), i+80)])
			}
		}
		t.Fatal("ordinary output changed")
	}
}
