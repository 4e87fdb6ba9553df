package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/hosts"
)

func TestJobFinishWritesNotificationOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	sess, _, _ := s.Sessions().SessionFor(ctx, ThreadKey{Platform: "web", Channel: "ops", Thread: "t1"})
	j, err := s.Jobs().CreateJob(ctx, hosts.Job{SessionID: sess.ID, Host: "web-1", Command: "apt-get update", Requester: "alice"})
	if err != nil || j.ID == 0 || j.State != hosts.JobRunning {
		t.Fatalf("CreateJob = %+v, %v", j, err)
	}
	if err := s.Jobs().SetJobOutput(ctx, j.ID, "Reading package lists..."); err != nil {
		t.Fatal(err)
	}
	code := 0
	won, err := s.Jobs().FinishJob(ctx, j.ID, hosts.JobSucceeded, &code, "Done.", "job 1 finished: exit 0")
	if err != nil || !won {
		t.Fatalf("FinishJob = %v, %v", won, err)
	}
	if won, _ := s.Jobs().FinishJob(ctx, j.ID, hosts.JobFailed, nil, "", "again"); won {
		t.Error("a finished job finished twice")
	}
	got, _ := s.Jobs().Job(ctx, j.ID)
	if got.State != hosts.JobSucceeded || got.ExitCode == nil || *got.ExitCode != 0 || got.OutputTail != "Done." || got.EndedAt.IsZero() {
		t.Fatalf("Job = %+v", got)
	}
	if _, err := s.Jobs().Job(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing job: %v", err)
	}
	if jobs, _ := s.Jobs().Jobs(ctx, sess.ID, 10); len(jobs) != 1 {
		t.Errorf("Jobs = %+v", jobs)
	}

	undelivered, _ := s.Inbox().UndeliveredNotifications(ctx, 10)
	if len(undelivered) != 1 || undelivered[0].SessionID != sess.ID || undelivered[0].JobID != j.ID {
		t.Fatalf("UndeliveredNotifications = %+v", undelivered)
	}
	if on, _ := s.Inbox().UndeliveredNotifications(ctx, 10, "console"); len(on) != 0 {
		t.Errorf("a process serving only the terminal took another platform's notice: %+v", on)
	}
	if on, _ := s.Inbox().UndeliveredNotifications(ctx, 10, "console", sess.Platform); len(on) != 1 {
		t.Errorf("the notice of a served platform = %+v", on)
	}
	id := undelivered[0].ID
	if n, _ := s.Inbox().MarkDelivered(ctx, id); n != 1 {
		t.Error("MarkDelivered did not mark")
	}
	if n, _ := s.Inbox().MarkDelivered(ctx, id); n != 0 {
		t.Error("MarkDelivered marked twice")
	}
	if left, _ := s.Inbox().UndeliveredNotifications(ctx, 10); len(left) != 0 {
		t.Errorf("still undelivered: %+v", left)
	}
	// Delivery to the thread and injection into the agent are independent.
	pending, _ := s.Inbox().UninjectedNotifications(ctx, sess.ID)
	if len(pending) != 1 {
		t.Fatalf("UninjectedNotifications = %+v", pending)
	}
	s.Inbox().MarkInjected(ctx, pending[0].ID)
	if pending, _ := s.Inbox().UninjectedNotifications(ctx, sess.ID); len(pending) != 0 {
		t.Errorf("still uninjected: %+v", pending)
	}
}

func TestInterruptRunningJobsAtStartup(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	running, _ := s.Jobs().CreateJob(ctx, hosts.Job{Host: "db-1", Command: "vacuumdb --all"})
	done, _ := s.Jobs().CreateJob(ctx, hosts.Job{Host: "db-1", Command: "true"})
	zero := 0
	s.Jobs().FinishJob(ctx, done.ID, hosts.JobSucceeded, &zero, "", "ok")
	jobs, err := s.Jobs().InterruptRunningJobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].ID != running.ID || jobs[0].State != hosts.JobInterrupted {
		t.Fatalf("InterruptRunningJobs = %+v, %v", jobs, err)
	}
	got, _ := s.Jobs().Job(ctx, running.ID)
	if got.State != hosts.JobInterrupted {
		t.Errorf("job state = %s; want interrupted", got.State)
	}
	notes, _ := s.Inbox().UndeliveredNotifications(ctx, 10)
	if len(notes) != 2 || !strings.Contains(notes[1].Text, "interrupted") || !strings.Contains(notes[1].Text, "not re-run") {
		t.Errorf("notifications = %+v", notes)
	}
	if again, _ := s.Jobs().InterruptRunningJobs(ctx); len(again) != 0 {
		t.Errorf("second start-up interrupted %d jobs again", len(again))
	}
}
