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
