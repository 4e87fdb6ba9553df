package discord

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// bodyRecorder keeps the body of every message post and edit that passes
// through it, on its way to the fake.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	post := req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/messages")
	edit := req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/messages/")
	if post || edit {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// last is the body of the last post recorded, as a reviewer reads it.
func (r *bodyRecorder) last(t *testing.T) []byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) == 0 {
		t.Fatal("no message was posted or edited")
	}
	var body any
	if err := json.Unmarshal(r.bodies[len(r.bodies)-1], &body); err != nil {
		t.Fatalf("the post's body is not JSON: %v", err)
	}
	return connectortest.JSON(t, body)
}

// The payload of each representative message, and of a card's edit once
// decided, as Discord receives it
// (botkube's pkg/bot/testdata/*.golden.json), in each rendering:
// Components V2 (text displays, a card's container with a section per
// fact and the buttons as accessories, the flag on the edit too) and the
// legacy one in legacy_*.golden.json (content with <@id> and the context
// line as subtext, fields in an embed, buttons in action rows); who may
// be pinged. The fake refuses what Discord refuses, so every golden is a
// payload Discord takes (no 50035). go test ./connectors/discord -run
// Golden -update rewrites them.
func TestPayloadGolden(t *testing.T) {
	t.Parallel()
	for prefix, cfg := range map[string]Config{"": {}, "legacy_": legacy} {
		t.Run("rendering="+strings.TrimSuffix(prefix, "_"), func(t *testing.T) {
			t.Parallel()
			goldenCorpus(t, cfg, prefix)
		})
	}
}

// goldenCorpus posts connectortest.Messages with cfg's rendering and
// compares each payload with testdata/<prefix><name>.golden.json.
func goldenCorpus(t *testing.T, cfg Config, prefix string) {
	f := newFake(t)
	ch := f.AddChannel(guild, "ops")
	rec := &bodyRecorder{}
	cfg.Token, cfg.APIURL = testToken, f.URL
	c, err := New(cfg, Options{Transport: rec, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	const alice, bob = "1100000000000000777", "1100000000000000778"
	dest := connectors.Dest{Platform: Platform, Channel: ch, Recipient: connectors.User{ID: alice}}
	msgs := withRisks(connectortest.Messages(c.Limits(), alice, bob), prefix == "")
	refs := map[string]connectors.Ref{}
	for _, name := range slices.Sorted(maps.Keys(msgs)) {
		if refs[name], err = c.Post(t.Context(), dest, msgs[name]); err != nil {
			t.Fatalf("%s: post: %v", name, err)
		}
		connectortest.Golden(t, prefix+name, rec.last(t), *update)
	}
	// A decided card is the pending card edited: its buttons go, and
	// nobody is pinged again.
	if err := c.Edit(t.Context(), refs["card_pending"], msgs["card_approved"]); err != nil {
		t.Fatalf("edit: %v", err)
	}
	connectortest.Golden(t, prefix+"card_decided_edit", rec.last(t), *update)
	// An alert's summary (Discord shows no feedback buttons) and a
	// finished plan's text card: Discord has no plan block.
	more := connectortest.Summaries()
	for _, name := range slices.Sorted(maps.Keys(more)) {
		if _, err := c.Post(t.Context(), dest, more[name]); err != nil {
			t.Fatalf("%s: post: %v", name, err)
		}
		connectortest.Golden(t, prefix+name, rec.last(t), *update)
	}
	controlGoldens(t, c, rec, dest, prefix)
	refused := 0
	for _, call := range f.Calls() {
		if call.Status >= 400 {
			refused++
		}
	}
	if refused > 0 || len(rec.bodies) != len(msgs)+1+len(more)+2 {
		t.Errorf("%d of the corpus's %d payloads refused by the fake; want none", refused, len(rec.bodies))
	}
}

// withRisks gives the corpus's approval cards the risks the bot gives
// them (approvals.Card.Risk), and with high a pending card of high risk
// too: the accent colours the V2 rendering shows (the legacy one shows
// none).
func withRisks(msgs map[string]connectors.Message, high bool) map[string]connectors.Message {
	for name, risk := range map[string]connectors.Risk{"card_pending": connectors.RiskAsk, "card_approved": connectors.RiskApproved} {
		m := msgs[name]
		m.Risk = risk
		msgs[name] = m
	}
	if high {
		m := msgs["card_pending"]
		m.Risk = connectors.RiskHigh
		msgs["card_pending_high"] = m
	}
	return msgs
}

// controlGoldens: the Stop message the renderer posts below an answer
// whose status it cannot show on the answer itself
// (bot/render/control.go), its status line and Stop, and its edit once
// the answer has ended, without Stop.
func controlGoldens(t *testing.T, c *Connector, rec *bodyRecorder, dest connectors.Dest, prefix string) {
	stop := connectors.Button{ActionID: "stop", Value: "discord/" + dest.Channel + "/" + dest.Channel, Label: "Stop", Style: connectors.StyleDanger}
	ref, err := c.Post(t.Context(), dest, connectors.Message{Context: "running `du -sh /var/log` on web-1…", Buttons: []connectors.Button{stop}})
	if err != nil {
		t.Fatalf("post the Stop message: %v", err)
	}
	connectortest.Golden(t, prefix+"control_stop", rec.last(t), *update)
	if err := c.Edit(t.Context(), ref, connectors.Message{Context: "the answer above has ended"}); err != nil {
		t.Fatalf("edit the Stop message: %v", err)
	}
	connectortest.Golden(t, prefix+"control_ended", rec.last(t), *update)
}
