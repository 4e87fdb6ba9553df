package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsbot/opsbot/connectors"
)

// Poster posts to one chat platform; a connectors.Connector is one.
type Poster interface {
	Limits() connectors.Limits
	Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error)
	Edit(ctx context.Context, ref connectors.Ref, m connectors.Message) error
}

// Posters finds the Poster of a platform ("slack", "web", …).
type Posters func(platform string) (Poster, bool)

// Publisher posts reports into stable threads: one message per schedule,
// channel and day, edited to the latest summary, with each run's details
// in its thread. The message refs are kept in the store. A new failure
// or a recovery is announced in a new message that notifies (see
// Schedule.NotifyAs).
type Publisher struct {
	Store   PostStore
	Posters Posters
}

// ShouldPost decides whether a report goes to a channel: always; on
// failures only when something fails or is unreachable; on changes when
// a status changed since the previous run, or when nothing was posted
// there today (the daily "still all ok"). A report with an Announcement
// (a new failure, a recovery) is posted whatever the mode.
func ShouldPost(mode PostMode, rep Report, postedToday bool) bool {
	switch mode {
	case PostAlways:
		return true
	case PostFailures:
		return rep.Failing()
	}
	return rep.Changed() || !postedToday
}

// Day is the report's day in the schedule's zone, YYYY-MM-DD: the key of
// the message it belongs to.
func (rep Report) Day() string {
	loc := rep.Zone
	if loc == nil {
		loc = time.UTC
	}
	return rep.At.In(loc).Format("2006-01-02")
}

// Publish posts rep to each of the schedule's channels its post mode
// allows. One channel's failure does not stop the others; the errors are
// joined.
func (p *Publisher) Publish(ctx context.Context, s Schedule, rep Report) error {
	var errs []error
	for _, d := range s.PostTo {
		if err := p.publishTo(ctx, s, d, rep); err != nil {
			errs = append(errs, fmt.Errorf("checks: post %s to %s %s: %w", s.Name, d.Platform, d.Channel, err))
		}
	}
	return errors.Join(errs...)
}

func (p *Publisher) publishTo(ctx context.Context, s Schedule, d Destination, rep Report) error {
	poster, ok := p.Posters(d.Platform)
	if !ok {
		return fmt.Errorf("no %q connector is configured", d.Platform)
	}
	post, err := p.Store.CheckPostFor(ctx, s.Name, d.Platform, d.Channel, rep.Day())
	today := err == nil
	if err != nil && !errors.Is(err, ErrNoPost) {
		return err
	}
	max := poster.Limits().MaxText
	if max <= 0 {
		max = 2000
	}
	news := rep.Announcement(max - mentionRoom)
	if !ShouldPost(s.mode(), rep, today) && news == "" {
		return nil
	}
	summary := rep.Summary(max)
	summary.ThreadName = "health: " + s.Name + " · " + rep.Day()
	if post, err = p.keepSummary(ctx, poster, post, today, summary); err != nil {
		return err
	}
	// The grid's legend is read once a day: in the day's first report.
	for _, m := range rep.details(max, !today) {
		to := connectors.Dest{Platform: d.Platform, Channel: d.Channel, Thread: post.Thread}
		if err := retry(ctx, func() error { _, err := poster.Post(ctx, to, m); return err }); err != nil {
			return err
		}
	}
	return p.announce(ctx, poster, s, post, news)
}

// mentionRoom is kept free in an announcement for the mentions a
// connector puts before it and the thread's link it puts after it.
const mentionRoom = 300

// announce posts news, what needs someone since the previous run, as a
// new message that notifies: no platform notifies anyone of the edit of
// the day's summary. It is a reply in the day's thread shown in the
// channel too, or a new channel message, as the schedule says, opening
// with the schedule's mentions for the platform.
func (p *Publisher) announce(ctx context.Context, poster Poster, s Schedule, post CheckPost, news string) error {
	if news == "" {
		return nil
	}
	m := connectors.Message{Text: news, Notify: s.notifyFor(post.Platform)}
	to := connectors.Dest{Platform: post.Platform, Channel: post.Channel}
	if s.notifyAs() == NotifyThread {
		to.Thread, m.Broadcast = post.Thread, true
	}
	return retry(ctx, func() error { _, err := poster.Post(ctx, to, m); return err })
}

// maxRetries bounds how often one post is retried after the platform
// asked to slow down.
const maxRetries = 3

// retry calls fn again after the wait a rate limit asks for, a few times.
func retry(ctx context.Context, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		wait, limited := connectors.RetryAfter(err)
		if !limited || i == maxRetries {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
	}
}

// keepSummary edits the day's message to the latest summary, or posts it
// (and records it) when the day has none yet.
func (p *Publisher) keepSummary(ctx context.Context, poster Poster, post CheckPost, exists bool, m connectors.Message) (CheckPost, error) {
	if exists {
		ref := connectors.Ref{Platform: post.Platform, Channel: post.Channel, Thread: post.Thread, ID: post.MessageID}
		return post, retry(ctx, func() error { return poster.Edit(ctx, ref, m) })
	}
	var ref connectors.Ref
	to := connectors.Dest{Platform: post.Platform, Channel: post.Channel}
	err := retry(ctx, func() (err error) { ref, err = poster.Post(ctx, to, m); return err })
	if err != nil {
		return post, err
	}
	post.MessageID, post.Thread = ref.ID, ref.Thread
	if post.Thread == "" {
		post.Thread = ref.ID
	}
	return post, p.Store.RecordCheckPost(context.WithoutCancel(ctx), post)
}
