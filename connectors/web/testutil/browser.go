package testutil

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is the browser the tests drive; $OPSBOT_CHROMIUM overrides it.
const ChromiumPath = "/usr/bin/chromium"

// chromiumPath is the browser the tests drive: ChromiumPath, or
// $OPSBOT_CHROMIUM.
func chromiumPath() string {
	if p := os.Getenv("OPSBOT_CHROMIUM"); p != "" {
		return p
	}
	return ChromiumPath
}

// flags keep Chromium from reaching for the network (this machine's is
// closed, and a stalled update or sync check stalls the browser) and let
// it run as root in a container.
func flags(dataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath()),
		chromedp.UserDataDir(dataDir),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
	}
}

// Browser starts a headless Chromium with a fresh profile and returns the
// context of its first tab. The browser stops when the test ends. Derive
// a tab of another person with NewUser. Without Chromium the test fails;
// under go test -short (a laptop without it) it is skipped, saying so.
func Browser(t testing.TB) context.Context {
	t.Helper()
	if fi, err := os.Stat(chromiumPath()); testing.Short() && (err != nil || fi.Mode()&0o111 == 0) {
		t.Skipf("needs Chromium: %s is not installed (go test -short skips this; make test installs it)", chromiumPath())
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags(t.TempDir())...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium (%s): %v", chromiumPath(), err)
	}
	return ctx
}

// NewUser opens a tab in a new browser context of browser: its own
// cookies and local storage, as a second person on another machine has.
func NewUser(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a new browser context: %v", err)
	}
	return ctx
}

// Serve serves h on a loopback httptest server until the test ends and
// returns its URL. Open event streams are cut at the end, so the server's
// Close does not wait for them.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}
