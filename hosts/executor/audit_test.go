package executor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/approvals/redact/redacttest"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// A health check's command is audited as the scheduler's, and its output
// comes back redacted.
func TestAuditedRunnerRecordsChecks(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fake := hosts.RunnerFunc(func(context.Context, hosts.Host, string, hosts.Options, func(hosts.Chunk)) (hosts.Result, error) {
		return hosts.Result{ExitCode: 1, Output: []byte(redacttest.Output())}, nil
	})
	r := AuditedRunner{Runner: fake, Policy: allowAll{},
		Audit: storeTrail{st}, Redactor: redact.New(redacttest.OwnSecrets...), Actor: "scheduler"}
	res, _ := r.Run(context.Background(), hosts.Host{Name: "web-1"}, "cat /etc/app.env", hosts.Options{}, nil)
	redacttest.AssertNoSecret(t, redacttest.Secrets(), string(res.Output))
	trail, err := st.Audit().AuditTrail(context.Background(), "host:web-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(trail) != 2 || trail[0].Actor != "scheduler" || trail[0].Action != "command.start" || !strings.Contains(string(trail[0].Detail), `"decision":"allow"`) ||
		trail[1].Action != "command.end" || !strings.Contains(string(trail[1].Detail), `"exit_code":1`) {
		t.Errorf("audit trail = %+v", trail)
	}
}

// allowAll is a policy that allows everything.
type allowAll struct{}

func (allowAll) Decision(string, string) string { return "allow" }

// storeTrail is the store as the audit trail, as cmd/opsbot wires it (its
// executorStore).
type storeTrail struct{ st *store.Store }

func (s storeTrail) Audit(ctx context.Context, e AuditEntry) error {
	return s.st.Audit().Audit(ctx, store.AuditEntry(e))
}

// A fan-out's starts are all on disk, in one commit, before its first
// host runs; its ends follow in one more commit.
func TestAuditedRecordsAFanOutInTwoCommits(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names := []string{"web-1", "web-2", "web-3"}
	trail := &countingTrail{storeTrail: storeTrail{st}}
	run := execFunc(func(ctx context.Context, names []string, command string, _ hosts.ExecOptions) []hosts.ExecResult {
		starts, err := st.Audit().AuditTrail(ctx, "")
		if err != nil || len(starts) != len(names) {
			t.Errorf("before the first host ran, the trail held %d rows (%v); want the %d starts", len(starts), err, len(names))
		}
		out := make([]hosts.ExecResult, len(names))
		for i, n := range names {
			out[i] = hosts.ExecResult{Host: n}
		}
		return out
	})
	e := Audited{Executor: run, Policy: allowAll{}, Audit: trail}
	e.Exec(WithRequester(context.Background(), "web:alice"), names, "uptime", hosts.ExecOptions{})
	all, err := st.Audit().AuditTrail(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 || all[0].Action != "command.start" || all[5].Action != "command.end" || all[5].Subject != "host:web-3" || all[0].Actor != "web:alice" {
		t.Errorf("trail = %+v", all)
	}
	if trail.single != 0 || trail.batches != 2 {
		t.Errorf("%d single commits and %d batches; want 0 and 2", trail.single, trail.batches)
	}
}

// execFunc is a hosts.Executor of its Exec alone.
type execFunc func(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult

func (f execFunc) Resolve(target string) ([]string, error) { return []string{target}, nil }
func (f execFunc) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	return f(ctx, names, command, opts)
}

// countingTrail counts the commits asked of the store.
type countingTrail struct {
	storeTrail
	single, batches int
}

func (c *countingTrail) Audit(ctx context.Context, e AuditEntry) error {
	c.single++
	return c.storeTrail.Audit(ctx, e)
}

func (c *countingTrail) AuditBatch(ctx context.Context, entries []AuditEntry) error {
	c.batches++
	rows := make([]store.AuditEntry, len(entries))
	for i, e := range entries {
		rows[i] = store.AuditEntry(e)
	}
	return c.st.Audit().AuditBatch(ctx, rows)
}
