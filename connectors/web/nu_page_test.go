package web_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsbot/opsbot/connectors/web/testutil"
)

// A first visit, waiting for a name, says so in the header and the
// channel list, not a "connecting…" that never ends; once the name is
// picked the page goes live with its channels.
func TestNuFirstVisitSaysToPickAName(t *testing.T) {
	_, url := startScriptBot(t)
	tab := testutil.Browser(t)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, testutil.DefaultWait)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0))
	}
	text := func(sel string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, testutil.DefaultWait)
		defer cancel()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+sel+`').textContent`))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return raw
	}
	run("open the page", chromedp.Navigate(url+"/"), poll(`document.querySelector('#name-dialog').open`))
	if conn, channels := text("#conn"), text("#channel-list"); conn != "pick a name to start" || channels != "Pick a name to see the channels." {
		t.Errorf("waiting for a name, the header says %q and the channel list %q; want them to say to pick a name", conn, channels)
	}
	run("pick a name", chromedp.SetValue("#name-dialog input", "alice"), chromedp.Click("#name-form button"),
		poll(`document.body.dataset.live === '1' && document.querySelectorAll('#channel-list a').length > 0`))
	if conn := text("#conn"); conn != "live" {
		t.Errorf("after the name the header says %q; want live", conn)
	}
}
