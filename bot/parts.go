package bot

import (
	"github.com/opsbot/opsbot/agent"
	"time"
)

// parts are what New builds, once, each over the small interfaces it
// declares: nothing here is rebuilt per call, and none holds the Bot.
type parts struct {
	crew      *crew
	inbox     *inbox
	threads   *threads
	cards     *cards
	followUps *followUps
	notices   *jobNotices
	recovery  *recovery
	orphans   *orphans
	settle    *settleWatch
}

// build makes the parts and joins them into the three lines of stages
// (pipeline.go), as alertmanager's PipelineBuilder does its pipelines.
func build(d Deps) parts {
	cfg := d.Config.WithDefaults()
	p := parts{crew: &crew{}, settle: newSettleWatch(d.Inbox.Unsettled, d.Log)}
	may := approvers{gate: d.Gate, hosts: d.Hosts}
	out := d.Platforms
	p.cards = newCards(d, out)
	an := newAnswers(d, out, p.cards)
	rn := newRunner(d, an, p.cards, cfg)
	p.threads = newThreads(cfg, p.crew, out)
	p.followUps = newFollowUps(d, out, p.cards, rn, an, p.threads)
	p.cards.decided = p.followUps.now
	p.inbox = &inbox{store: d.Inbox, crew: p.crew, kick: p.settle.kick, log: d.Log}
	p.notices = newJobNotices(d, out, p.inbox)
	p.recovery = &recovery{store: d.Sessions, interruptJobs: d.JobRecords.InterruptRunningJobs, out: out, log: d.Log}
	if d.Sweeper != nil {
		p.orphans = &orphans{store: d.JobRecords, sweeper: d.Sweeper, out: out, log: d.Log}
	}
	cmds := newCommands(d, out, may)
	clk := clicks{threads: p.threads, may: may, vote: p.cards.vote, grant: p.cards.grantSimilar, askAgain: p.followUps.askAgain, plans: d.Plans, out: out,
		feedbacks: d.Feedback, metrics: d.Metrics, log: d.Log}
	ses := sessions{find: d.Sessions.SessionFor, setCwd: d.Sessions.SetSessionCwd, dataDir: cfg.DataDir}

	p.inbox.front = multiStage{
		recordStage{record: d.Inbox.RecordEvent, log: d.Log},
		dedupeStage{metrics: d.Metrics},
		stageFunc(p.inbox.enqueue),
	}
	p.inbox.route = multiStage{
		admitStage{cfg: d.Config, busy: p.threads.busy, hasSession: d.Sessions.HasSession, out: out, crew: p.crew, metrics: d.Metrics, log: d.Log},
		routeStage{threads: p.threads, may: may, cancelOnNew: d.CancelOnNewMessage, click: clk.click, finished: p.inbox.finish,
			approvals: cmds.approvalsNow(ses.open), out: out, crew: p.crew},
		queueStage{enqueue: p.threads.enqueue, note: p.threads.noteFor, out: out, crew: p.crew},
	}
	p.threads.begun = p.inbox.finish
	p.threads.keepNotice = p.inbox.keepNotice
	p.threads.run = multiStage{
		sessionStage{open: ses.open, act: p.followUps.act, first: p.followUps.first, out: out, log: d.Log},
		turnStage{agentOn: d.Agent != nil, stream: an.stream, run: rn.command, command: cmds.answer},
		renderStage{end: an.end},
	}
	p.threads.finish = finishStage{kick: p.settle.kick}
	return p
}

// newCards shows approval requests and takes the votes on them; decided is
// set once the follow-ups are built.
func newCards(d Deps, out *Platforms) *cards {
	c := &cards{store: d.Approvals, sessions: d.Sessions, out: out, log: d.Log, since: time.Now()}
	if d.Gate != nil {
		c.gate = d.Gate
		if d.Grants != nil {
			c.granter, c.grants = d.Gate, d.Grants
		}
	}
	return c
}

// newAnswers runs agent turns through d's agent into streams on out.
func newAnswers(d Deps, out *Platforms, c *cards) *answers {
	s := &streams{Platforms: out, rec: d.Sessions, metrics: d.Metrics, log: d.Log}
	an := &answers{answerOut: s, noAgentHelp: d.NoAgentHelp, turns: d.Sessions, recordFollowUp: d.Approvals.RecordFollowUp, cards: c, metrics: d.Metrics, log: d.Log}
	if d.Agent != nil {
		an.agent = d.Agent
	}
	return an
}

// newRunner answers `run` through d's guard, its executor and the jobs.
func newRunner(d Deps, an *answers, c *cards, cfg Config) *runner {
	rn := &runner{claims: d.Approvals, turns: an, refreshCards: c.refresh, timeout: cfg.RunTimeout, log: d.Log}
	if d.Guard != nil {
		rn.guard = d.Guard
		if d.Guard.Exec != nil {
			rn.exec = d.Guard.Exec.Exec
		}
	}
	if d.Jobs != nil {
		rn.startJob = d.Jobs.Start
	}
	return rn
}

// newFollowUps acts on decided approvals through the cards, the runner,
// the agent and the threads' queues.
func newFollowUps(d Deps, out *Platforms, c *cards, rn *runner, an *answers, ts *threads) *followUps {
	fu := &followUps{store: d.Approvals, session: d.Sessions.Session, out: out, cards: c, run: rn.approved, enqueue: ts.enqueue, log: d.Log}
	if d.Gate != nil {
		fu.expireDue = d.Gate.ExpireDue
	}
	if d.Guard != nil {
		fu.policy = d.Guard.Policy
	}
	if d.Agent != nil {
		fu.resume, fu.settle = an.resume, d.Agent.Settle
	}
	return fu
}

// newJobNotices delivers job notifications; with agent.on_job_end: turn,
// each wakes the agent in its thread, through the inbox like any event.
func newJobNotices(d Deps, out *Platforms, in *inbox) *jobNotices {
	n := &jobNotices{store: d.Inbox, session: d.Sessions.Session, job: d.JobRecords.Job, out: out, log: d.Log, serves: out.names}
	if d.JobEndTurns && d.Agent != nil {
		n.turn, n.queue = jobEndTurn, in.queueJobEnd
	}
	return n
}

// newCommands answers the chat commands about threads, jobs and hosts.
func newCommands(d Deps, out *Platforms, may approvers) *commands {
	c := &commands{jobRecords: d.JobRecords, forget: d.Sessions.DeleteMessagesAfter, hosts: d.Hosts, checks: d.Health, out: out, log: d.Log, mayApprove: may.approve,
		memory: d.Memory, prose: proseOf(d.Agent)}
	if d.Jobs != nil {
		c.cancel = d.Jobs.Cancel
	}
	if d.Gate != nil {
		c.pending, c.whoMay = d.Approvals, d.Gate.WhoMayApprove
		if d.Grants != nil {
			c.grants = d.Grants
		}
	}
	return c
}

var _ turnAgent = (*agent.Agent)(nil)
