package approvals

import "time"

// ApprovalState is where an approval request stands.
type ApprovalState string

// The approval states; every state but pending is final.
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
)

// Approval is a request for people to approve one command.
type Approval struct {
	ID        string
	Hash      string // of (host, command, cwd, requester)
	SessionID int64  // 0 when not bound to a session
	Platform  string
	Channel   string
	Host      string
	Command   string
	Cwd       string
	Requester string
	Reasons   []string
	Quorum    int
	State     ApprovalState
	CreatedAt time.Time
	ExpiresAt time.Time
	DecidedAt time.Time
	DecidedBy string
}

// Vote is one person's vote on an approval.
type Vote struct {
	Voter string
	Vote  string // "approve" or "deny"
	At    time.Time
}

// VoteTally is the outcome of RecordVote.
type VoteTally struct {
	// Recorded is false when the vote was not counted: the voter had voted
	// already, or the request was no longer pending or had expired.
	Recorded  bool
	Approvals int
	Denies    int
	// Decided is set when this call decided the request (a deny, or the
	// last approval the quorum needed), in the same transaction as the
	// vote; Approval then shows the decision.
	Decided  bool
	Approval Approval
}
