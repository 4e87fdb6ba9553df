package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
)

// A command that prints 1.22 MB through the real executor: the marker the
// model reads names the megabytes the command printed and were dropped,
// not the size of the executor's kept buffer ("16426 bytes cut"), and an
// ERROR line between the kept head and tail stays.
func TestCutOutputSaysTheTrueSize(t *testing.T) {
	t.Parallel()
	fleet, err := hosts.NewFleet(hosts.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	// 40,000 lines of 30 bytes (1.2 MB), with an ERROR 20 KB from the end:
	// inside the executor's kept tail, outside a plain head and tail cut.
	cmd := `for i in $(seq 1 40000); do printf '%06d GET /health 200 in 3ms\n' $i; ` +
		`[ $i = 39300 ] && echo 'ERROR upstream timed out'; done; echo TAIL`
	results := (&executor.Fleet{Fleet: fleet}).Exec(context.Background(), []string{hosts.LocalHost}, cmd,
		hosts.ExecOptions{Confinement: hosts.Confinement{Approved: true}})
	if results[0].Err != nil || !results[0].Truncated {
		t.Fatalf("run: %+v", results[0].Err)
	}
	got := formatResults("loop", results).Content
	if !strings.Contains(got, "[… 1.1") || !strings.Contains(got, " MB cut here …]") {
		t.Errorf("the marker does not say the megabytes cut:\n%s", markers(got))
	}
	for _, want := range []string{"000001 GET", "ERROR upstream timed out\n", "TAIL\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %q", want)
		}
	}
	if len(got) > maxToolResult+2048 {
		t.Errorf("the model gets %d bytes; want at most about %d", len(got), maxToolResult)
	}
}

func markers(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, "cut here") || strings.Contains(l, "omitted") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Hosts that printed the same and ended the same are read once, named
// together; a host that differs has its own frame.
func TestSameOutputFromSeveralHostsIsGrouped(t *testing.T) {
	t.Parallel()
	same := "nginx: configuration file /etc/nginx/nginx.conf test is successful\n"
	results := []hosts.ExecResult{
		{Host: "web-1", Stdout: same}, {Host: "web-2", Stdout: same}, {Host: "db-1", Stdout: "emerg: unknown directive\n", ExitCode: 1}, {Host: "web-3", Stdout: same},
	}
	got := formatResults("nginx -t", results).Content
	if n := strings.Count(got, same); n != 1 {
		t.Errorf("the common output appears %d times; want once:\n%s", n, got)
	}
	for _, want := range []string{`<output host="web-1, web-2, web-3" command="nginx -t">`, "[web-1, web-2, web-3: same output, exit 0 in 0s]",
		`<output host="db-1"`, "[db-1: exit 1 in 0s]", "- web-3: exit 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
