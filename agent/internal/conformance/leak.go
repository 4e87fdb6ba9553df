package conformance

import (
	"context"

	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// LeakCase is a failure whose every visible error must be free of the key.
type LeakCase struct {
	Name    string
	Replies []testfake.Reply
}

// keyNeverLeaks checks that every failure the caller can see is free of
// the API key, even when the server echoes the key back, at every level
// of the error's chain: the failures every API has, then extra, the ones
// only w's has.
func keyNeverLeaks[S T[S]](t S, w Wire, extra []LeakCase) {
	status := func(code int, kind string) []testfake.Reply {
		return []testfake.Reply{{Status: code, Body: w.Echo(kind)}}
	}
	four := func(r testfake.Reply) []testfake.Reply { return []testfake.Reply{r, r, r, r} }
	cases := []LeakCase{
		{"401", status(401, "auth")},
		{"403", status(403, "permission")},
		{"404", status(404, "not_found")},
		{"400", status(400, "invalid")},
		{"429 long wait", []testfake.Reply{{Status: 429, Header: map[string]string{"Retry-After": "900"}, Body: w.Echo("rate_limit")}}},
		{"500 four times", four(testfake.Reply{Status: 500, Body: w.Echo("server")})},
		{"not JSON", append([]testfake.Reply{{Status: 502, Body: "<html>bad gateway " + w.Key + "</html>"}}, four(testfake.Reply{Status: 502, Body: w.Key})[:3]...)},
		{"error after text", []testfake.Reply{{Raw: w.ErrorAfterTextEcho()}}},
		{"disconnect", []testfake.Reply{{SSE: "text.sse", CutAfter: w.CutMidText}}},
	}
	for _, c := range append(cases, extra...) {
		t.Run(c.Name, func(t S) {
			t.Parallel()
			f := w.Fake(t, c.Replies...)
			p, _ := w.Provider(t, f)
			o := testfake.Collect(t, p.Stream(context.Background(), testfake.Conversation()))
			testfake.AssertNoSecret(t, o.Err, w.Key)
		})
	}
}
