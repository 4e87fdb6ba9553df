package slack_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/slack"
	"github.com/opsbot/opsbot/connectors/slack/slackfake"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// sign is Slack's v0 signature of body at ts.
func sign(secret string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

func signedRequest(path, body, secret string, ts int64, contentType string) *http.Request {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", sign(secret, ts, body))
	return req
}

func eventBody(id, text string) string {
	b, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": slackfake.Team, "event_id": id,
		"event": map[string]any{"type": "app_mention", "user": "U0ALICE", "text": "<@" + slackfake.BotUser + "> " + text,
			"ts": "1700000001.000001", "channel": "C0OPS"}})
	return string(b)
}

// HTTP mode: /slack/events and /slack/actions accept a request only with
// Slack's valid v0 signature, at most 5 minutes old, seen once; anything
// else is 401 and reaches nobody. url_verification is answered.
func TestHTTPModeSignatures(t *testing.T) {
	t.Parallel()
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	r := startOn(t, fake, slack.Config{Mode: slack.ModeHTTP, SigningSecret: signingSecret}, slack.Options{}, false)
	<-r.conn.Identified()
	mux := http.NewServeMux()
	r.conn.Routes(mux)
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w
	}
	now := time.Now().Unix()
	const form = "application/x-www-form-urlencoded"
	valid := signedRequest("/slack/events", eventBody("Ev1", "valid"), signingSecret, now, "application/json")
	replay := signedRequest("/slack/events", eventBody("Ev1", "valid"), signingSecret, now, "application/json")
	missing := httptest.NewRequest("POST", "/slack/events", strings.NewReader(eventBody("Ev4", "missing")))
	noSig := signedRequest("/slack/events", eventBody("Ev5", "no signature"), signingSecret, now, "application/json")
	noSig.Header.Del("X-Slack-Signature")
	tampered := signedRequest("/slack/events", eventBody("Ev6", "tampered"), signingSecret, now, "application/json")
	tampered.Body = io.NopCloser(strings.NewReader(eventBody("Ev6", "run local rm -rf /")))
	clickPayload := `{"type":"block_actions","user":{"id":"U0BOB"},"team":{"id":"T0FAKE"},"channel":{"id":"C0OPS"},"trigger_id":"t1",` +
		`"container":{"type":"message","message_ts":"1700000002.000002","channel_id":"C0OPS"},"actions":[{"action_id":"approve","block_id":"opsbot_actions","value":"req-1","type":"button","action_ts":"1700000003.1"}]}`
	clickForm := url.Values{"payload": {clickPayload}}.Encode()
	for _, tc := range []struct {
		name string
		req  *http.Request
		want int
	}{
		{"valid", valid, http.StatusOK},
		{"stale (6 minutes old)", signedRequest("/slack/events", eventBody("Ev2", "stale"), signingSecret, now-360, "application/json"), http.StatusUnauthorized},
		{"wrong secret", signedRequest("/slack/events", eventBody("Ev3", "wrong"), "not-the-secret", now, "application/json"), http.StatusUnauthorized},
		{"missing headers", missing, http.StatusUnauthorized},
		{"missing signature", noSig, http.StatusUnauthorized},
		{"body changed after signing", tampered, http.StatusUnauthorized},
		{"replay of the valid request", replay, http.StatusUnauthorized},
		{"click, wrong secret", signedRequest("/slack/actions", clickForm, "not-the-secret", now, form), http.StatusUnauthorized},
		{"click, valid", signedRequest("/slack/actions", clickForm, signingSecret, now, form), http.StatusOK},
	} {
		if w := serve(tc.req); w.Code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	if ev := r.next(t); ev.ID != "Ev1" || ev.Text != "valid" || !ev.Mention {
		t.Errorf("the first event handed on is %+v; want the valid one", ev)
	}
	if ev := r.next(t); ev.Kind != connectors.EventAction || ev.User.ID != "U0BOB" || ev.Value != "req-1" {
		t.Errorf("the next event handed on is %+v; want the valid click and nothing else", ev)
	}
	select {
	case ev := <-r.events:
		t.Errorf("a refused request reached the bot: %+v", ev)
	default:
	}
	challenge := `{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","token":"x"}`
	if w := serve(signedRequest("/slack/events", challenge, signingSecret, now, "application/json")); w.Code != 200 || w.Body.String() != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("url_verification answered %d %q", w.Code, w.Body)
	}
}
