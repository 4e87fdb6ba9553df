package alerts

import (
	"regexp"
	"strings"
)

// RouteFor is the first route whose match fits the labels (false: none).
func (c Config) RouteFor(labels map[string]string) (Route, bool) {
	for _, r := range c.Routes {
		if r.Matches(labels) {
			return r, true
		}
	}
	return Route{}, false
}

// Matches says whether every label of the route's match fits: equal, or
// for a value written =~RE, the whole label value matches RE.
func (r Route) Matches(labels map[string]string) bool {
	for k, want := range r.Match {
		got := labels[k]
		if re, ok := strings.CutPrefix(want, "=~"); ok {
			m, err := regexp.MatchString("^(?:"+re+")$", got)
			if err != nil || !m {
				return false
			}
			continue
		}
		if got != want {
			return false
		}
	}
	return true
}
