package main

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/opsbot/opsbot/store/leader"
)

// roleLabel is the pod label the chart's Service selects on with
// ha.enabled (deploy/helm/opsbot/templates/_helpers.tpl, opsbot.roleLabel):
// both pods are Ready, so that a rollout and a drain can take either,
// and the label sends HTTP traffic (Slack's HTTP mode, the web chat,
// webhooks) to the leader alone.
const roleLabel = "opsbot.dev/role"

// The values of roleLabel.
const (
	roleStandby = "standby"
	roleLeader  = "leader"
)

// deletionCost is the annotation by which a ReplicaSet chooses which of
// its Ready pods to delete first: a rolling update (maxSurge 0) then
// replaces the standby before the leader, so a rollout fails over once,
// not twice (the old standby leading between the two).
const deletionCost = "controller.kubernetes.io/pod-deletion-cost"

// costOf is the deletion cost of a pod in role.
func costOf(role string) string {
	if role == roleLeader {
		return "1000"
	}
	return "0"
}

// podRole keeps this process's pod labelled with its role. A patch that
// fails is logged and retried every retry period: the Lease decides who
// leads, the label only routes traffic, so a failure never stops the bot.
type podRole struct {
	client *leader.Client // nil: the pod cannot be labelled (logged)
	pod    string
	retry  time.Duration
	log    *slog.Logger
	ctx    context.Context

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// labelPod labels the pod ha names (its identity, the pod's name) as a
// standby, now and until lead or stop, and returns what does so. A
// restarted container keeps its pod and its old label: this resets it.
func labelPod(ctx context.Context, ha leader.Settings, log *slog.Logger) *podRole {
	p := &podRole{pod: ha.Identity, retry: ha.RetryPeriod, log: log, ctx: ctx}
	c, err := leader.InCluster(ha.ServiceAccount, ha.Namespace, ha.LeaseName, os.Getenv)
	if err != nil {
		log.Warn("this pod cannot be labelled with its role: the Service will not send it traffic when it leads", "pod", p.pod, "err", err)
	}
	p.client = c
	p.set(roleStandby)
	return p
}

// lead labels the pod as the leader: the Service sends it the traffic.
func (p *podRole) lead() { p.set(roleLeader) }

// stop ends a patch still being retried, and waits for it. Safe to call
// twice.
func (p *podRole) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
}

// end cancels the running attempt and waits for it; p.mu is held.
func (p *podRole) end() {
	if p.cancel != nil {
		p.cancel()
		<-p.done
		p.cancel = nil
	}
}

// set replaces whatever role is being set with role.
func (p *podRole) set(role string) {
	if p.client == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
	ctx, cancel := context.WithCancel(p.ctx)
	p.cancel, p.done = cancel, make(chan struct{})
	go p.label(ctx, role, p.done)
}

// label patches the pod's label until it is set or ctx ends. A patch
// under way is not cut when ctx ends (only when the process stops): a
// cut request may still reach the API server after the next role's, and
// leave the leader labelled a standby.
func (p *podRole) label(ctx context.Context, role string, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.retry)
	defer t.Stop()
	var failing string
	for {
		err := p.client.PatchPod(p.ctx, p.pod, map[string]string{roleLabel: role}, map[string]string{deletionCost: costOf(role)})
		if err == nil {
			p.log.Info("this pod is labelled with its role", "pod", p.pod, "role", role)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if err.Error() != failing {
			p.log.Warn("cannot label this pod with its role (needs pods get and patch in the chart's Role); retrying", "pod", p.pod, "role", role, "err", err)
			failing = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
