package hosts_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/store"
)

// bashExec runs commands with bash on this machine, as the local host
// would (the runners are tested on their own): here only what Jobs makes
// of a run matters.
type bashExec struct{}

func (bashExec) Resolve(target string) ([]string, error) { return []string{target}, nil }

func (bashExec) Exec(ctx context.Context, names []string, command string, opts hosts.ExecOptions) []hosts.ExecResult {
	out := make([]hosts.ExecResult, len(names))
	for i, h := range names {
		start := time.Now()
		cmd := exec.CommandContext(ctx, "bash", "-c", command)
		cmd.Dir = opts.Dir
		b, err := cmd.CombinedOutput()
		out[i] = hosts.ExecResult{Host: h, Stdout: string(b), Duration: time.Since(start)}
		if ee, ok := err.(*exec.ExitError); ok {
			out[i].ExitCode = ee.ExitCode()
		} else if err != nil {
			out[i].Err = err
		}
	}
	return out
}

// jobsStore is a real store in t.TempDir() and a session for the jobs.
func jobsStore(t *testing.T) (*store.Store, int64) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "jobs.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, _, err := st.Sessions().SessionFor(context.Background(), store.ThreadKey{Platform: "test", Channel: "c", Thread: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return st, sess.ID
}

func startJob(j *hosts.Jobs, session int64, command, dir string) (hosts.Job, error) {
	return j.Start(context.Background(), hosts.Job{SessionID: session, Host: "local", Command: command, Requester: "alice"}, dir, hosts.Confinement{})
}

func TestJobsCancelAndClose(t *testing.T) {
	t.Parallel()
	st, sess := jobsStore(t)
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: bashExec{}}
	job, err := startJob(jobs, sess, "sleep 600", "")
	if err != nil {
		t.Fatal(err)
	}
	if !jobs.Cancel(job.ID) {
		t.Fatal("Cancel found no running job")
	}
	jobs.Close()
	jobs.Close() // twice is safe
	got, _ := st.Jobs().Job(context.Background(), job.ID)
	if got.State != hosts.JobCancelled {
		t.Errorf("state = %s; want cancelled", got.State)
	}
	// The notice says what the store says, and why; not "failed".
	if note := jobNote(t, st, job.ID); note != "job 1 (`sleep 600` on local) was cancelled: stopped on request" {
		t.Errorf("notice = %q", note)
	}
	others := &hosts.Jobs{Store: st.Jobs(), Exec: bashExec{}}
	other, err := startJob(others, sess, "sleep 601", "")
	if err != nil {
		t.Fatal(err)
	}
	others.Close()
	if note, want := jobNote(t, st, other.ID), "was cancelled: opsbot was shutting down"; !strings.Contains(note, want) {
		t.Errorf("notice after a shutdown = %q; want %q", note, want)
	}
	if _, err := startJob(jobs, sess, "true", ""); err == nil {
		t.Error("a job started after Close")
	}
}

// A job that cannot start hands back the approval it claimed, so that its
// follow-up is closed now (the requester is told at once) rather than
// read after the next start as approved and never run.
func TestJobThatCannotStartHandsBackItsApproval(t *testing.T) {
	t.Parallel()
	st, sess := jobsStore(t)
	var handed []string
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: bashExec{}, Unstarted: func(_ context.Context, id string) { handed = append(handed, id) }}
	jobs.Close()
	job := hosts.Job{SessionID: sess, Host: "local", Command: "true", Requester: "alice"}
	if _, err := jobs.Start(context.Background(), job, "", hosts.Confinement{Approved: true, Approval: "a7"}); err == nil {
		t.Fatal("a job started after Close")
	}
	if _, err := jobs.Start(context.Background(), job, "", hosts.Confinement{}); err == nil {
		t.Fatal("a job started after Close")
	}
	if len(handed) != 1 || handed[0] != "a7" {
		t.Errorf("approvals handed back = %v; want [a7] (none for a job without one)", handed)
	}
}

func TestJobsRunWhereTheirApprovalSaid(t *testing.T) {
	t.Parallel()
	st, sess := jobsStore(t)
	dir := t.TempDir()
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: bashExec{}}
	defer jobs.Close()
	job, err := startJob(jobs, sess, "pwd", dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs.Wait()
	got, _ := st.Jobs().Job(context.Background(), job.ID)
	if got.State == hosts.JobRunning {
		t.Fatal("the job's end was not recorded")
	}
	if strings.TrimSpace(got.OutputTail) != dir {
		t.Errorf("job ran in %q; want the session's directory %q", got.OutputTail, dir)
	}
}

// A job's kept output is its head and its tail, cut between whole
// characters (the head's cut falls inside an é here), with the cut marked.
func TestJobsKeepTheHeadAndTailOfLongOutput(t *testing.T) {
	t.Parallel()
	st, sess := jobsStore(t)
	jobs := &hosts.Jobs{Store: st.Jobs(), Exec: bashExec{}}
	defer jobs.Close()
	job, err := startJob(jobs, sess, `echo a; for i in $(seq 3000); do printf 'é%04d\n' $i; done; echo last`, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs.Wait()
	got, _ := st.Jobs().Job(context.Background(), job.ID)
	if !strings.HasPrefix(got.OutputTail, "a\n") || !strings.HasSuffix(got.OutputTail, "last\n") ||
		!strings.Contains(got.OutputTail, "bytes cut here") || !utf8.ValidString(got.OutputTail) {
		t.Errorf("kept output (%d bytes) = %.80q … %.80q", len(got.OutputTail), got.OutputTail, got.OutputTail[max(len(got.OutputTail)-80, 0):])
	}
}

// jobNote is the notification a job's end left.
func jobNote(t *testing.T, st *store.Store, id int64) string {
	t.Helper()
	notes, err := st.Inbox().UndeliveredNotifications(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if n.JobID == id {
			return n.Text
		}
	}
	t.Fatalf("job %d left no notification", id)
	return ""
}
