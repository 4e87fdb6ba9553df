package main

import (
	"net/http"
	"slices"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
)

// slackHTTPTimeout bounds one Web API call.
const slackHTTPTimeout = 30 * time.Second

// newSlack builds the Slack connector when slack.bot_token is set (nil
// otherwise). Its clicks carry the user groups approver rules name.
func (rt *parts) newSlack() (*slack.Connector, error) {
	cfg := rt.cfg.Slack
	if !cfg.Enabled() {
		return nil, nil
	}
	return slack.New(cfg, slack.Options{
		HTTPClient: &http.Client{Timeout: slackHTTPTimeout,
			Transport: rt.metrics.api.Transport(slack.Platform, connectors.LastPathSegment, nil)},
		UserGroups: slackUserGroups(rt.cfg),
		Threads:    rt.store.AssistantThreads(slack.Platform),
		Redact:     rt.red.String, // the title it gives a thread is the question's
		Log:        rt.log.With("connector", slack.Platform),
	})
}

// slackUserGroups are the Slack user group ids approvals.approvers names.
func slackUserGroups(cfg *Config) []string {
	var out []string
	for _, a := range cfg.Approvals.Approvers {
		for _, g := range a.Slack.UserGroups {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}
