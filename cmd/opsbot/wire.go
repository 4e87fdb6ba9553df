package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/anthropic"
	"github.com/opsbot/opsbot/agent/mcp"
	"github.com/opsbot/opsbot/agent/openai"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

// parts holds what every front shares: the store, the fleet, the
// policy, jobs and the model.
type parts struct {
	cfg    *Config
	log    *slog.Logger
	store  *store.Store
	fleet  *hosts.Fleet
	policy *policy.Policy
	exec   *executor.Fleet
	// run is exec behind the audit trail: what the guard and jobs use.
	run      hosts.Executor
	red      *redact.Redactor
	jobs     *hosts.Jobs
	skills   []agent.Skill
	provider agent.Provider // nil: no model configured
	model    string         // what the provider is, for people
	// modelName is the model the agent asks the provider for (agent.model,
	// else OPSBOT_MODEL, else the provider's default), for GET /api/models.
	modelName string
	// ready holds what /readyz checks: the database, each connector, and
	// whatever a component adds with ready.Add (e.g. the sandbox).
	ready *readiness
	// sandbox is what the bot's host does with commands allowed without
	// approval (Landlock, or the fallback policy.sandbox names).
	sandbox sandboxState
	// remote is what each SSH host holds those commands with (bubblewrap,
	// a readonly_user, or none), probed at start.
	remote *remoteSandboxes
	// metrics are the collectors /metrics serves.
	metrics *metrics
	// mcp are the MCP tool servers, once the agent is built (addMCP).
	mcp *mcp.Servers
	// fence is checked before every command, MCP call and post: the
	// leadership in ha.
	fence fenceGate
}

// build opens everything; Close undoes it.
func build(ctx context.Context, cfg *Config, log *slog.Logger) (*parts, error) {
	rt := &parts{cfg: cfg, log: log, red: cfg.redactor(), ready: &readiness{}}
	var err error
	if rt.store, err = store.Open(ctx, cfg.Store); err != nil {
		return nil, err
	}
	rt.ready.Add("database", rt.store.Health)
	if note := noFullTextNote(); note != "" {
		log.Warn(note)
	}
	if rt.metrics, err = newMetrics(rt.store); err != nil {
		rt.Close()
		return nil, err
	}
	if rt.fleet, err = hosts.NewFleet(cfg.Hosts); err != nil {
		rt.Close()
		return nil, err
	}
	if rt.policy, err = policy.NewPolicy(policyConfig(cfg)); err != nil {
		rt.Close()
		return nil, err
	}
	rt.sandbox = newSandboxState(cfg.Policy, hosts.SandboxSupport, hosts.SandboxIsolation)
	rt.policy = rt.sandbox.apply(rt.policy, rt.fleet.Local)
	rt.sandbox.logStart(log)
	withRemoteSandbox(cfg.Policy, rt.fleet, rt.policy)
	rt.remote = probeRemoteSandboxes(rt.fleet, log)
	if rt.skills, err = agent.LoadSkills(cfg.Agent.SkillDirs); err != nil {
		rt.Close()
		return nil, err
	}
	if rt.provider, rt.model, err = newProvider(cfg.Agent); err != nil {
		rt.Close()
		return nil, err
	}
	rt.modelName = modelName(rt.model, cfg.Agent.Model)
	rt.exec = &executor.Fleet{Fleet: rt.fleet, Redactor: rt.red}
	// A run closes the follow-up of the approval it claimed, if its
	// command never started (the ledger closes it as one starts). The
	// fence is outermost: a deposed leader writes no audit row either.
	rt.run = rt.fence.executor(rt.metrics.tools.Executor(executor.Audited{Executor: executor.Settled{Executor: rt.exec, FollowUps: rt.store.Approvals()}, Policy: rt.policyChecker(), Audit: executorStore{st: rt.store}, Redactor: rt.red, Log: log}))
	rt.jobs = &hosts.Jobs{Store: rt.store.Jobs(), Exec: rt.run, Unstarted: func(ctx context.Context, approval string) {
		rt.store.Approvals().FinishFollowUp(ctx, approval)
	}}
	// Every secret is read by now (config, the providers' keys): none
	// stays in the environment for a command to print.
	scrubEnv(cfg.secrets())
	return rt, nil
}

// Close stops jobs and closes connections and the database. Safe twice.
func (rt *parts) Close() {
	if rt.mcp != nil {
		rt.mcp.Close()
	}
	if rt.jobs != nil {
		rt.jobs.Close()
	}
	if rt.remote != nil {
		rt.remote.Close()
	}
	if rt.fleet != nil {
		rt.fleet.Close()
	}
	if rt.store != nil {
		rt.store.Close()
	}
}

// newProvider picks the model endpoint: the config's provider, or one the
// environment names (ANTHROPIC_API_KEY; OPENAI_API_KEY or OPENAI_BASE_URL).
// No provider is not an error: the agent is off.
func newProvider(c agent.Config) (agent.Provider, string, error) {
	name := c.Provider
	if name == "" {
		switch {
		case os.Getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "":
			name = "openai"
		default:
			return nil, "", nil
		}
	}
	switch name {
	case "anthropic":
		p, err := anthropic.New(anthropic.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: c.Model, MaxTokens: c.MaxTokens},
			anthropic.WithIdleTimeout(c.StreamIdleTimeout))
		if err != nil {
			return nil, "", err
		}
		return p, "anthropic", nil
	case "openai":
		opts := []openai.Option{openai.WithIdleTimeout(c.StreamIdleTimeout)}
		if c.StreamUsage != nil && !*c.StreamUsage {
			opts = append(opts, openai.WithoutStreamUsage())
		}
		p, err := openai.New(openai.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: c.Model, MaxTokens: c.MaxTokens}, opts...)
		if err != nil {
			return nil, "", err
		}
		return p, "openai-compatible", nil
	}
	return nil, "", fmt.Errorf("agent.provider: %q is not a provider: use anthropic or openai", name)
}

// modelName is the model a provider labelled label asks for when the
// config names model: the same fallbacks as the providers' own.
func modelName(label, model string) string {
	if model == "" {
		model = os.Getenv("OPSBOT_MODEL")
	}
	switch {
	case model != "":
		return model
	case label == "anthropic":
		return string(anthropic.DefaultModel)
	case label == "openai-compatible":
		return string(openai.DefaultModel)
	}
	return ""
}

// noAgentHelp is what a mention gets when no model is configured.
const noAgentHelp = "The agent is off: no model is configured. Set `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`, " +
	"or `OPENAI_BASE_URL` for Ollama/vLLM) and restart, or set `agent.provider` in the config. " +
	"Meanwhile the commands work: `help`, `run <target> <command>`, `jobs`, `hosts`."

// guard builds the one path from a front to the hosts, with that front's
// way of approving.
func (rt *parts) guard(approver approvals.Approver) *approvals.Guard {
	return &approvals.Guard{Policy: rt.policyChecker(), Approver: approver, Exec: rt.run, Refusals: rt.metrics.tools,
		Grants: approvals.Grants{Store: rt.store.Approvals()}}
}

func (rt *parts) policyChecker() approvals.FleetPolicy {
	return withRemoteSandbox(rt.cfg.Policy, rt.fleet, rt.policy)
}

// hostGroups gives a host's groups, for approver rules per host group.
func (rt *parts) hostGroups(host string) []string {
	if h, ok := rt.fleet.Inventory.Lookup(host); ok {
		return h.Groups
	}
	return nil
}

// hostInfo lists the inventory for prompts and `hosts`.
func (rt *parts) hostInfo() []agent.HostInfo {
	var out []agent.HostInfo
	for _, h := range rt.fleet.Inventory.Hosts() {
		out = append(out, agent.HostInfo{Name: h.Name, Groups: h.Groups})
	}
	return out
}

// newAgent builds the agent with every tool, behind guard; gate is the
// approvals config in force, which the prompt describes.
func (rt *parts) newAgent(guard *approvals.Guard, gate approvals.GateConfig) *agent.Agent {
	if rt.provider == nil {
		return nil
	}
	env := agent.Environment{Hosts: rt.hostInfo(), Skills: rt.skills, Policy: policyPrompt(rt.cfg.Policy, gate) + mcpPrompt(rt.cfg.MCP)}
	history := bot.RedactedHistory{History: persist.History{Store: rt.store}, Redactor: rt.red}
	a := &agent.Agent{Provider: rt.metrics.agent.Provider(rt.model, rt.provider), History: history, Notices: persist.Notices{Store: rt.store},
		System: env.SystemPrompt, Model: rt.cfg.Agent.Model, MaxTokens: rt.cfg.Agent.MaxTokens, MaxSteps: rt.cfg.Agent.MaxSteps,
		TurnTimeout: rt.cfg.Agent.TurnTimeout, CompactAt: rt.cfg.Agent.CompactAt, ContextBudget: rt.cfg.Agent.ContextBudget,
		Budget: rt.cfg.Agent.Budget, Tokens: persist.Tokens{Store: rt.store}}
	a.Tools = agent.NewRegistry(
		&tools.RunCommand{Guard: guard},
		&tools.StartJob{Guard: guard, Jobs: rt.jobs},
		&tools.JobStatus{Store: rt.store, Jobs: rt.jobs},
		&tools.CancelJob{Store: rt.store, Jobs: rt.jobs},
		&tools.TailFile{Guard: guard},
		&tools.ReadFile{Guard: guard},
		&tools.Grep{Guard: guard},
		&tools.Journal{Guard: guard},
		&tools.HTTPGet{Guard: guard},
		&tools.PolicyCheck{Guard: guard},
		&tools.SearchHistory{Memory: rt.store.Memory()},
		tools.NewTodo(),
		agent.NewCompactTool(),
		&tools.Task{Parent: a},
	)
	for _, t := range tools.QueryTools(rt.cfg.Agent.Prometheus.URL, rt.cfg.Agent.Loki.URL) {
		a.Tools.Add(t)
	}
	if len(rt.cfg.Checks.Schedules) > 0 {
		a.Tools.Add(&tools.HealthResults{Reports: healthReports{store: rt.store, schedules: rt.cfg.Checks.Schedules}})
	}
	if len(rt.skills) > 0 {
		a.Tools.Add(&tools.LoadSkill{Skills: rt.skills})
		a.Tools.Add(&tools.RunSkillScript{Skills: rt.skills, Guard: guard})
	}
	rt.addMCP(a.Tools, guard)
	return a
}

// jobEndTurns says whether a finished job wakes the agent in its thread
// (agent.on_job_end: turn, the default) or is only posted (notify).
func (rt *parts) jobEndTurns() bool {
	return rt.cfg.Agent.OnJobEnd != agent.JobEndNotify
}

// osUser is the name of the person at this terminal.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if n := os.Getenv("USER"); n != "" {
		return n
	}
	return "operator"
}

var errAgentOff = errors.New("no model is configured: set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL (with OPSBOT_MODEL), or agent.provider in the config")
