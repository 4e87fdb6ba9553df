// Package testutil drives the web chat in a real headless Chromium for
// tests: it starts the browser (Debian's /usr/bin/chromium, installed by
// `make test`), serves a handler on loopback, and works the page the way a
// person would — pick a name, post, reply, click — reading back what the
// page shows. The bot's end-to-end tests use it as well as the
// connector's own.
//
//	browser := testutil.Browser(t)
//	url := testutil.Serve(t, conn.Handler())
//	alice := testutil.Open(t, browser, url, "alice")
//	thread := alice.StartThread("@opsbot run local uptime")
//	alice.WaitFor("the answer", func(ms []testutil.Message) bool { … })
package testutil
