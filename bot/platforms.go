package bot

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/opsbot/opsbot/approvals/redact"
	"github.com/opsbot/opsbot/bot/render"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors"
)

// Platforms is the connector set the bot posts through: every connector
// behind the one redactor, the edit budget of each workspace, and the life
// of every request to a platform, which the bot's Close ends. It is built
// before the bot (the scheduled health checks post through it too:
// ReportPoster) and handed to New in Deps.
type Platforms struct {
	red *redact.Redactor
	log *slog.Logger

	mu      sync.Mutex
	conns   map[string]connectors.Connector
	budgets map[budgetKey]*render.EditBudget
	// life is the context of every request to a platform; end ends it
	// once the bot's grace has passed.
	life    context.Context
	endLife context.CancelFunc
	// fence is asked before anything reaches a platform (Fence).
	fence *postFence
}

// budgetKey names one workspace of one platform: edit budgets are per
// workspace (Slack's chat.update limit is).
type budgetKey struct{ platform, workspace string }

// NewPlatforms puts each connector behind red (nil: a redactor with the
// default rules and no own secrets); log hears what could not be posted.
func NewPlatforms(red *redact.Redactor, log *slog.Logger, conns ...connectors.Connector) *Platforms {
	if red == nil {
		red = redact.New()
	}
	if log == nil {
		log = slog.Default()
	}
	p := &Platforms{red: red, log: log, conns: map[string]connectors.Connector{}, budgets: map[budgetKey]*render.EditBudget{}}
	p.life, p.endLife = context.WithCancel(context.Background())
	p.fence = &postFence{}
	for _, c := range conns {
		p.conns[c.Name()] = &redactedConn{Connector: c, red: red, fence: p.fence}
	}
	return p
}

// ReportPoster is how scheduled reports reach a platform: through its
// connector, behind the redactor. It is a checks.Posters.
func (p *Platforms) ReportPoster(platform string) (checks.Poster, bool) {
	c, ok := p.conn(platform)
	if !ok {
		return nil, false
	}
	return c, true
}

var _ checks.Posters = (*Platforms)(nil).ReportPoster

func (p *Platforms) conn(platform string) (connectors.Connector, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.conns[platform]
	return c, ok
}

// names are the platforms the bot posts to, sorted.
func (p *Platforms) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.conns))
}

// budget is the edit budget of one workspace of a platform.
func (p *Platforms) budget(platform, workspace string) *render.EditBudget {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := budgetKey{platform, workspace}
	bu := p.budgets[k]
	if bu == nil {
		perMinute := 0
		if c, ok := p.conns[platform]; ok {
			perMinute = c.Limits().EditsPerMinute
		}
		bu = render.NewEditBudget(perMinute)
		p.budgets[k] = bu
	}
	return bu
}

// lifeCtx is the context of requests to platforms, with ctx's values.
func (p *Platforms) lifeCtx(ctx context.Context) context.Context {
	return valuesOf{Context: p.life, values: ctx}
}

// end ends every request to a platform and every wait on one.
func (p *Platforms) end() { p.endLife() }

// valuesOf is a context that ends with its Context and has the values of
// another (a request's trace ids, say).
type valuesOf struct {
	context.Context
	values context.Context
}

func (v valuesOf) Value(key any) any { return v.values.Value(key) }

// reply posts a plain message into the event's thread.
func (p *Platforms) reply(ctx context.Context, ev connectors.Event, text string) {
	if _, err := p.post(ctx, destOf(ev), connectors.Message{Text: text}); err != nil {
		p.log.Warn("post reply", "channel", ev.Channel, "err", err)
	}
}

// post posts a complete message to d, within its platform's limits and
// waiting out its rate limits a few times.
func (p *Platforms) post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	c, ok := p.conn(d.Platform)
	if !ok {
		return connectors.Ref{}, fmt.Errorf("bot: no %q connector", d.Platform)
	}
	var ref connectors.Ref
	err := retryLimited(ctx, func() (err error) {
		ref, err = c.Post(ctx, d, m)
		return err
	})
	return ref, err
}
