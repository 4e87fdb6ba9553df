package approvals

import (
	"fmt"
	"strings"
	"time"
)

// DecisionText says how a request was decided, for people: "approved by
// @bob", "expired: nobody decided within 15 minutes". name shows the
// person who decided, a stored "platform:id".
func DecisionText(a Approval, name func(key string) string) string {
	switch {
	case a.State == ApprovalExpired || a.DecidedBy == ExpiryActor:
		return "expired: nobody decided within " + HumanDuration(a.ExpiresAt.Sub(a.CreatedAt))
	case a.DecidedBy == "opsbot:card-not-posted" || a.DecidedBy == "opsbot:announce-failed":
		return "denied: its approval card could not be posted"
	case a.State == ApprovalPending:
		return "waiting for approval"
	}
	return fmt.Sprintf("%s by %s", a.State, name(a.DecidedBy))
}

// atName shows a stored "platform:id" as "@id", for the model and logs;
// opsbot's own actors ("opsbot:expiry") keep their whole key.
func atName(key string) string {
	if _, id, ok := strings.Cut(key, ":"); ok && !strings.HasPrefix(key, "opsbot") {
		return "@" + id
	}
	return "@" + key
}

// HumanDuration says a duration the way people do: "15 minutes",
// "1 hour 30 minutes", "45 seconds".
func HumanDuration(d time.Duration) string {
	if d < time.Second {
		return "less than a second"
	}
	d = d.Round(time.Second)
	unit := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var parts []string
	if h > 0 {
		parts = append(parts, unit(h, "hour"))
	}
	if m > 0 {
		parts = append(parts, unit(m, "minute"))
	}
	if s > 0 && h == 0 {
		parts = append(parts, unit(s, "second"))
	}
	if len(parts) == 0 {
		return "0 seconds"
	}
	return strings.Join(parts, " ")
}
