package approvals

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The two votes.
const (
	VoteApprove = "approve"
	VoteDeny    = "deny"
)

// VoteStatus is what became of a vote.
type VoteStatus int

const (
	// VoteCounted: the vote is recorded; the request still waits for more.
	VoteCounted VoteStatus = iota
	// VoteDecided: this vote decided the request.
	VoteDecided
	// VoteLate: the request was already decided (or expired); nothing
	// changed.
	VoteLate
	// VoteDuplicate: this person had voted already; nothing changed.
	VoteDuplicate
	// VoteRefused: this person may not vote this way on this request.
	VoteRefused
)

// VoteResult tells the clicker what their vote did.
type VoteResult struct {
	Status VoteStatus
	// Approval is the request as it stands after the vote.
	Approval Approval
	// Approvals and Denies are the tally when the vote was counted.
	Approvals, Denies int
	// Reason explains a refusal.
	Reason string
}

// Message is the sentence to show the clicker, privately where the
// platform allows.
func (v VoteResult) Message() string {
	a := v.Approval
	switch v.Status {
	case VoteCounted:
		return fmt.Sprintf("Your approval is counted: %d of %d needed.", v.Approvals, a.Quorum)
	case VoteDecided:
		return fmt.Sprintf("The request is %s.", a.State)
	case VoteLate:
		if a.State == ApprovalExpired {
			return fmt.Sprintf("This request already expired at %s; nothing changed.", FormatTime(a.DecidedAt))
		}
		return fmt.Sprintf("This request was already %s by %s at %s; nothing changed.", a.State, person(a.DecidedBy), FormatTime(a.DecidedAt))
	case VoteDuplicate:
		return "You have already voted on this request; one vote per person."
	}
	return "Your vote was not counted: " + v.Reason
}

// Vote records one person's vote ("approve" or "deny") and decides the
// request when the vote completes the quorum or denies it. Refusals,
// duplicates and late votes change nothing and say why in the result;
// errors are the store's.
func (g *Gate) Vote(ctx context.Context, id string, voter Person, vote string) (VoteResult, error) {
	if vote != VoteApprove && vote != VoteDeny {
		return VoteResult{}, fmt.Errorf("approvals: vote %q: want approve or deny", vote)
	}
	a, err := g.store.Approval(ctx, id)
	if err != nil {
		return VoteResult{}, fmt.Errorf("approvals: vote: %w", err)
	}
	if a.State != ApprovalPending || !g.opt.Now().Before(a.ExpiresAt) {
		return g.late(ctx, a)
	}
	if why := g.refusal(a, voter, vote); why != "" {
		return VoteResult{Status: VoteRefused, Approval: a, Reason: why}, nil
	}
	if again, err := g.votedAs(ctx, id, voter); err != nil || again {
		return VoteResult{Status: VoteDuplicate, Approval: a}, err
	}
	t, err := g.store.RecordVote(ctx, id, voter.Key(), vote)
	if err != nil {
		return VoteResult{}, fmt.Errorf("approvals: vote: %w", err)
	}
	res := VoteResult{Status: VoteCounted, Approval: t.Approval, Approvals: t.Approvals, Denies: t.Denies}
	switch {
	case t.Decided:
		// The vote and its decision were one transaction.
		res.Status = VoteDecided
		g.notify(id, resultOf(t.Approval))
		return res, nil
	case !t.Recorded && (t.Approval.State != ApprovalPending || !g.opt.Now().Before(t.Approval.ExpiresAt)):
		return g.late(ctx, t.Approval)
	case !t.Recorded:
		res.Status = VoteDuplicate
	}
	return res, nil
}

// late answers a vote on a request that is decided or past its deadline,
// expiring it first if nobody has.
func (g *Gate) late(ctx context.Context, a Approval) (VoteResult, error) {
	if a.State == ApprovalPending {
		r, err := g.expire(ctx, a.ID)
		if err != nil {
			return VoteResult{}, err
		}
		a = r.Approval
	}
	return VoteResult{Status: VoteLate, Approval: a}, nil
}

// votedAs reports whether someone whose key reads as voter's, in another
// spelling, has voted on the request: `web:Alice` after `web:alice` is
// one person's second vote, which the store (keyed by spelling) would
// count.
func (g *Gate) votedAs(ctx context.Context, id string, voter Person) (bool, error) {
	votes, err := g.store.Votes(ctx, id)
	if err != nil {
		return false, fmt.Errorf("approvals: vote: %w", err)
	}
	return slices.ContainsFunc(votes, func(v Vote) bool {
		return v.Voter != voter.Key() && samePerson(v.Voter, voter.Key())
	}), nil
}

// refusal says why voter may not cast this vote, or "". The requester may
// always deny (withdraw) their own request; approving it needs
// allow_self_approval.
func (g *Gate) refusal(a Approval, voter Person, vote string) string {
	if voter.Platform == "" || voter.ID == "" {
		return "the vote does not say who cast it"
	}
	self := samePerson(voter.Key(), a.Requester)
	platform, _, _ := strings.Cut(a.Requester, ":")
	switch {
	case voter.Platform != platform:
		// Ids are the platforms' own: slack:U1 and discord:U1 may be one
		// person, or two. A request is decided where it was asked.
		return "this request was asked on another chat platform; it is decided there"
	case self && vote == VoteDeny:
		return ""
	case self && !g.cfg.AllowSelfApproval:
		return "you asked for " + asked(a) + "; someone else has to approve it"
	case !g.MayApprove(a, voter):
		return "you are not an approver for this channel and host"
	}
	return ""
}

// MayApprove reports whether the config names voter as an approver for
// the request's channel and every one of its hosts (a request for several
// hosts names them comma-separated); connectors use it to show the
// buttons only to those who may press them.
func (g *Gate) MayApprove(a Approval, voter Person) bool {
	for _, host := range strings.Split(a.Host, ",") {
		if !g.approverFor(a.Channel, host, voter) {
			return false
		}
	}
	return true
}

func (g *Gate) approverFor(channel, host string, voter Person) bool {
	groups := g.opt.HostGroups(host)
	for _, e := range g.cfg.Approvers {
		if e.covers(channel, host, groups) && e.names(voter) {
			return true
		}
	}
	return false
}

func (e ApproverConfig) covers(channel, host string, groups []string) bool {
	if len(e.Channels) > 0 && !slices.Contains(e.Channels, channel) {
		return false
	}
	if len(e.Hosts) == 0 && len(e.HostGroups) == 0 {
		return true
	}
	return slices.Contains(e.Hosts, host) || slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(e.HostGroups, g) })
}

func (e ApproverConfig) names(p Person) bool {
	anyOf := func(ids []string) bool {
		return slices.ContainsFunc(p.Groups, func(g string) bool { return slices.Contains(ids, g) })
	}
	switch p.Platform {
	case "slack":
		return slices.Contains(e.Slack.Users, p.ID) || anyOf(e.Slack.UserGroups)
	case "discord":
		return slices.Contains(e.Discord.Users, p.ID) || anyOf(e.Discord.Roles)
	case "web":
		// "*" is anyone who can reach the web chat: the embedded default,
		// which listens on loopback only.
		return slices.Contains(e.Web.Users, p.ID) || slices.Contains(e.Web.Users, "*")
	case "console":
		return slices.Contains(e.Console.Users, p.ID)
	}
	return false
}

// samePerson reports whether two person keys ("platform:id") name one
// person. On web and console the id is a name someone typed, so keys that
// differ only in case, width (fullwidth letters), combining marks or
// invisible characters are one person: `web:alice\u200b` may not approve
// `web:alice`'s request. Connectors refuse such names too (the web chat's
// names.go); this is the Gate's own check.
func samePerson(a, b string) bool { return foldPerson(a) == foldPerson(b) }

func foldPerson(key string) string {
	s := strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cc, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return -1
		}
		return r
	}, norm.NFKD.String(key))
	return norm.NFKC.String(cases.Fold().String(s))
}

// asked names what a request asks for, for the words of a refused vote:
// "this plan" or "this command".
func asked(a Approval) string {
	if IsPlan(a.Command) {
		return "this plan"
	}
	return "this command"
}
