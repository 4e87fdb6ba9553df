package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newSlackCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "slack",
		Short:   "Look up what the config needs from the Slack workspace",
		Example: "  opsbot slack groups --config /etc/opsbot/opsbot.yaml",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("say what to do: 'opsbot slack groups'"))
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "groups",
		Short: "List the workspace's user groups with their ids (S…), for approvals.approvers",
		Long: `List the Slack workspace's user groups: id, handle, name and members. An approver
rule names a group by its id (S…), not its handle:

  approvals:
    approvers:
      - slack: {user_groups: [S0123ABCD]}

Uses the bot token of slack.bot_token (or SLACK_BOT_TOKEN when the config has none)
and Slack's usergroups.list, which needs the bot token scope usergroups:read (the
OAuth & Permissions page of the app; reinstall the app after adding it).`,
		Example: "  opsbot slack groups --config /etc/opsbot/opsbot.yaml\n  SLACK_BOT_TOKEN=xoxb-… opsbot slack groups",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := slackAPIOf(cmd)
			if err != nil {
				return err
			}
			return listSlackGroups(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), api)
		},
	})
	return c
}

// slackAPI calls Slack's Web API with the bot token, waiting out a 429
// as Slack asks (Retry-After).
type slackAPI struct {
	base   string // ends in "/"
	token  string
	client *http.Client
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// waited is told each wait, for the person at the terminal.
	waited func(d time.Duration)
}

// slackAttempts is how many times a rate-limited call is tried.
const slackAttempts = 4

// slackAPIOf is the API of the config's Slack section, with its token
// from the config or SLACK_BOT_TOKEN.
func slackAPIOf(cmd *cobra.Command) (*slackAPI, error) {
	cfg, err := loadConfigFlag(cmd)
	if err != nil {
		return nil, err
	}
	token := cmp.Or(cfg.Slack.BotToken, os.Getenv("SLACK_BOT_TOKEN"))
	if token == "" {
		return nil, usageError(errors.New("no Slack bot token: set slack.bot_token in the config (--config FILE) or SLACK_BOT_TOKEN"))
	}
	return &slackAPI{base: cfg.Slack.WithDefaults().APIURL, token: token, client: &http.Client{Timeout: slackHTTPTimeout}, sleep: sleepCtx,
		waited: func(d time.Duration) {
			fmt.Fprintf(cmd.ErrOrStderr(), "Slack asks to wait %v (rate limit); waiting\n", d)
		}}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slackError is Slack's ok:false answer.
type slackError struct {
	Method string
	Code   string
	Needed string
}

func (e *slackError) Error() string {
	switch e.Code {
	case "missing_scope":
		return fmt.Sprintf("the bot token lacks the scope %s that %s needs: add it to the app's Bot Token Scopes (OAuth & Permissions), reinstall the app to the workspace, and try again",
			cmp.Or(e.Needed, "usergroups:read"), e.Method)
	case "invalid_auth", "not_authed", "token_revoked", "account_inactive":
		return "Slack refused the bot token (" + e.Code + "): copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page"
	}
	return "Slack answered " + e.Method + " with " + e.Code
}

// fixable reports whether the answer is the config's to fix: the token
// or its scopes.
func (e *slackError) fixable() bool {
	switch e.Code {
	case "missing_scope", "invalid_auth", "not_authed", "token_revoked", "account_inactive":
		return true
	}
	return false
}

// call posts form to method and decodes the answer into out.
func (a *slackAPI) call(ctx context.Context, method string, form url.Values, out any) error {
	for attempt := 1; ; attempt++ {
		body, wait, err := a.post(ctx, method, form)
		if err != nil {
			return err
		}
		if wait == 0 {
			return decodeSlack(method, body, out)
		}
		if attempt == slackAttempts {
			return fmt.Errorf("slack kept rate-limiting %s after %d tries: try again in a minute", method, attempt)
		}
		if a.waited != nil {
			a.waited(wait)
		}
		if err := a.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// post sends one request; a 429 returns the wait Slack asks for.
func (a *slackAPI) post(ctx context.Context, method string, form url.Values) ([]byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+method, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot reach Slack at %s: %w", a.base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("reading Slack's answer to %s: %w", method, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || secs < 1 {
			secs = 1
		}
		return nil, time.Duration(secs) * time.Second, nil
	case resp.StatusCode != http.StatusOK:
		return nil, 0, fmt.Errorf("slack answered %s with HTTP %s", method, resp.Status)
	}
	return body, 0, nil
}

// decodeSlack decodes a 200 answer: ok:false is a *slackError.
func decodeSlack(method string, body []byte, out any) error {
	var head struct {
		OK     bool   `json:"ok"`
		Error  string `json:"error"`
		Needed string `json:"needed"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return fmt.Errorf("slack's answer to %s is not JSON: is slack.api_url Slack's Web API?", method)
	}
	if !head.OK {
		return &slackError{Method: method, Code: cmp.Or(head.Error, "an unnamed error"), Needed: head.Needed}
	}
	return json.Unmarshal(body, out)
}

// slackGroup is one user group of usergroups.list.
type slackGroup struct {
	ID        string `json:"id"`
	Handle    string `json:"handle"`
	Name      string `json:"name"`
	UserCount int    `json:"user_count"`
}

// listSlackGroups prints the workspace's user groups as a table.
func listSlackGroups(ctx context.Context, w, errw io.Writer, api *slackAPI) error {
	var ans struct {
		Groups []slackGroup `json:"usergroups"`
	}
	err := api.call(ctx, "usergroups.list", url.Values{"include_count": {"true"}}, &ans)
	if se := (*slackError)(nil); errors.As(err, &se) && se.fixable() {
		return usageError(err)
	} else if err != nil {
		return err
	}
	if len(ans.Groups) == 0 {
		fmt.Fprintln(w, "The workspace has no user groups (Slack's free plan has none).")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tHANDLE\tNAME\tMEMBERS")
	for _, g := range ans.Groups {
		fmt.Fprintf(tw, "%s\t@%s\t%s\t%d\n", g.ID, g.Handle, g.Name, g.UserCount)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(errw, "Name a group by its ID in approvals.approvers, e.g. slack: {user_groups: [%s]}\n", ans.Groups[0].ID)
	return nil
}
