package store

import (
	"context"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/hosts"
)

// The flat methods of Store, each forwarding to its sub-store: removed
// when bot takes sub-stores. Nothing else may call them.

// Flat is the database with all its flat methods, for bot until it takes
// sub-stores: Store's own Jobs and Audit are the accessors of two
// sub-stores, so the flat Jobs and Audit can only live here. Removed,
// with this file, when bot takes sub-stores.
type Flat struct{ *Store }

// Approvals.

// AllStaleCards forwards to Approvals().AllStaleCards.
func (s *Store) AllStaleCards(ctx context.Context, limit int) ([]approvals.Approval, []string, []string, error) {
	return s.Approvals().AllStaleCards(ctx, limit)
}

// Approval forwards to Approvals().Approval.
func (s *Store) Approval(ctx context.Context, id string) (approvals.Approval, error) {
	return s.Approvals().Approval(ctx, id)
}

// ApprovalCard forwards to Approvals().ApprovalCard.
func (s *Store) ApprovalCard(ctx context.Context, id string) (channel, message string, err error) {
	return s.Approvals().ApprovalCard(ctx, id)
}

// ConsumeApproval forwards to Approvals().ConsumeApproval.
func (s *Store) ConsumeApproval(ctx context.Context, id, by string) (bool, error) {
	return s.Approvals().ConsumeApproval(ctx, id, by)
}

// CreateApproval forwards to Approvals().CreateApproval.
func (s *Store) CreateApproval(ctx context.Context, a approvals.Approval) (approvals.Approval, error) {
	return s.Approvals().CreateApproval(ctx, a)
}

// DecideApproval forwards to Approvals().DecideApproval.
func (s *Store) DecideApproval(ctx context.Context, id string, to approvals.ApprovalState, by string) (won bool, a approvals.Approval, err error) {
	return s.Approvals().DecideApproval(ctx, id, to, by)
}

// DecidedFollowUps forwards to Approvals().DecidedFollowUps.
func (s *Store) DecidedFollowUps(ctx context.Context) ([]FollowUp, error) {
	return s.Approvals().DecidedFollowUps(ctx)
}

// FinishFollowUp forwards to Approvals().FinishFollowUp.
func (s *Store) FinishFollowUp(ctx context.Context, approvalID string) (won bool, err error) {
	return s.Approvals().FinishFollowUp(ctx, approvalID)
}

// FollowUpFor forwards to Approvals().FollowUpFor.
func (s *Store) FollowUpFor(ctx context.Context, approvalID string) (f FollowUp, ok bool, err error) {
	return s.Approvals().FollowUpFor(ctx, approvalID)
}

// MarkCardShown forwards to Approvals().MarkCardShown.
func (s *Store) MarkCardShown(ctx context.Context, id string) error {
	return s.Approvals().MarkCardShown(ctx, id)
}

// PendingApprovals forwards to Approvals().PendingApprovals.
func (s *Store) PendingApprovals(ctx context.Context) ([]approvals.Approval, error) {
	return s.Approvals().PendingApprovals(ctx)
}

// RecordFollowUp forwards to Approvals().RecordFollowUp.
func (s *Store) RecordFollowUp(ctx context.Context, f FollowUp) error {
	return s.Approvals().RecordFollowUp(ctx, f)
}

// RecordVote forwards to Approvals().RecordVote.
func (s *Store) RecordVote(ctx context.Context, approvalID, voter, vote string) (approvals.VoteTally, error) {
	return s.Approvals().RecordVote(ctx, approvalID, voter, vote)
}

// ReusableApproval forwards to Approvals().ReusableApproval.
func (s *Store) ReusableApproval(ctx context.Context, sessionID int64, hash string) (a approvals.Approval, ok bool, err error) {
	return s.Approvals().ReusableApproval(ctx, sessionID, hash)
}

// SetApprovalCard forwards to Approvals().SetApprovalCard.
func (s *Store) SetApprovalCard(ctx context.Context, id, channel, message string) error {
	return s.Approvals().SetApprovalCard(ctx, id, channel, message)
}

// StaleCards forwards to Approvals().StaleCards.
func (s *Store) StaleCards(ctx context.Context, sessionID int64) ([]approvals.Approval, error) {
	return s.Approvals().StaleCards(ctx, sessionID)
}

// UnplacedCards forwards to Approvals().UnplacedCards.
func (s *Store) UnplacedCards(ctx context.Context, limit int) ([]approvals.Approval, error) {
	return s.Approvals().UnplacedCards(ctx, limit)
}

// Votes forwards to Approvals().Votes.
func (s *Store) Votes(ctx context.Context, approvalID string) ([]approvals.Vote, error) {
	return s.Approvals().Votes(ctx, approvalID)
}

// Jobs.

// AddRunning forwards to Jobs().AddRunning.
func (s *Store) AddRunning(ctx context.Context, c RunningCommand) (int64, error) {
	return s.Jobs().AddRunning(ctx, c)
}

// CreateJob forwards to Jobs().CreateJob.
func (s *Store) CreateJob(ctx context.Context, j hosts.Job) (hosts.Job, error) {
	return s.Jobs().CreateJob(ctx, j)
}

// FinishJob forwards to Jobs().FinishJob.
func (s *Store) FinishJob(ctx context.Context, id int64, state hosts.JobState, exitCode *int, outputTail, note string) (won bool, err error) {
	return s.Jobs().FinishJob(ctx, id, state, exitCode, outputTail, note)
}

// InterruptRunningJobs forwards to Jobs().InterruptRunningJobs.
func (s *Store) InterruptRunningJobs(ctx context.Context) ([]hosts.Job, error) {
	return s.Jobs().InterruptRunningJobs(ctx)
}

// Job forwards to Jobs().Job.
func (s *Store) Job(ctx context.Context, id int64) (hosts.Job, error) {
	return s.Jobs().Job(ctx, id)
}

// Jobs forwards to Jobs().Jobs.
func (s Flat) Jobs(ctx context.Context, sessionID int64, limit int) ([]hosts.Job, error) {
	return s.Store.Jobs().Jobs(ctx, sessionID, limit)
}

// RemoveRunning forwards to Jobs().RemoveRunning.
func (s *Store) RemoveRunning(ctx context.Context, id int64) error {
	return s.Jobs().RemoveRunning(ctx, id)
}

// RunningCommands forwards to Jobs().RunningCommands.
func (s *Store) RunningCommands(ctx context.Context) ([]RunningCommand, error) {
	return s.Jobs().RunningCommands(ctx)
}

// SetJobOutput forwards to Jobs().SetJobOutput.
func (s *Store) SetJobOutput(ctx context.Context, id int64, tail string) error {
	return s.Jobs().SetJobOutput(ctx, id, tail)
}

// Inbox.

// DeliverNotification forwards to Inbox().DeliverNotification.
func (s *Store) DeliverNotification(ctx context.Context, id int64, platform string, turn []byte) (eventID int64, err error) {
	return s.Inbox().DeliverNotification(ctx, id, platform, turn)
}

// FinishEvent forwards to Inbox().FinishEvent.
func (s *Store) FinishEvent(ctx context.Context, id int64) error {
	return s.Inbox().FinishEvent(ctx, id)
}

// ForgetEventsBefore forwards to Inbox().ForgetEventsBefore.
func (s *Store) ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	return s.Inbox().ForgetEventsBefore(ctx, t)
}

// MarkDelivered forwards to Inbox().MarkDelivered.
func (s *Store) MarkDelivered(ctx context.Context, ids ...int64) (int64, error) {
	return s.Inbox().MarkDelivered(ctx, ids...)
}

// MarkInjected forwards to Inbox().MarkInjected.
func (s *Store) MarkInjected(ctx context.Context, ids ...int64) (int64, error) {
	return s.Inbox().MarkInjected(ctx, ids...)
}

// OpenEvents forwards to Inbox().OpenEvents.
func (s *Store) OpenEvents(ctx context.Context) ([]InboxEvent, error) {
	return s.Inbox().OpenEvents(ctx)
}

// RecordEvent forwards to Inbox().RecordEvent.
func (s *Store) RecordEvent(ctx context.Context, platform, eventID string, event []byte) (id int64, first bool, err error) {
	return s.Inbox().RecordEvent(ctx, platform, eventID, event)
}

// SeenEvent forwards to Inbox().SeenEvent.
func (s *Store) SeenEvent(ctx context.Context, platform, eventID string) (first bool, err error) {
	return s.Inbox().SeenEvent(ctx, platform, eventID)
}

// UndeliveredNotifications forwards to Inbox().UndeliveredNotifications.
func (s *Store) UndeliveredNotifications(ctx context.Context, limit int, platforms ...string) ([]Notification, error) {
	return s.Inbox().UndeliveredNotifications(ctx, limit, platforms...)
}

// UninjectedNotifications forwards to Inbox().UninjectedNotifications.
func (s *Store) UninjectedNotifications(ctx context.Context, sessionID int64) ([]Notification, error) {
	return s.Inbox().UninjectedNotifications(ctx, sessionID)
}

// Unsettled forwards to Inbox().Unsettled.
func (s *Store) Unsettled(ctx context.Context) (int, error) {
	return s.Inbox().Unsettled(ctx)
}

// Sessions.

// AppendMessages forwards to Sessions().AppendMessages.
func (s *Store) AppendMessages(ctx context.Context, sessionID int64, msgs ...Message) ([]Message, error) {
	return s.Sessions().AppendMessages(ctx, sessionID, msgs...)
}

// BeginTurn forwards to Sessions().BeginTurn.
func (s *Store) BeginTurn(ctx context.Context, sessionID int64) (Turn, error) {
	return s.Sessions().BeginTurn(ctx, sessionID)
}

// CompactMessages forwards to Sessions().CompactMessages.
func (s *Store) CompactMessages(ctx context.Context, sessionID int64, msgs ...Message) ([]Message, error) {
	return s.Sessions().CompactMessages(ctx, sessionID, msgs...)
}

// CountSessions forwards to Sessions().CountSessions.
func (s *Store) CountSessions(ctx context.Context) (int, error) {
	return s.Sessions().CountSessions(ctx)
}

// DeleteMessagesAfter forwards to Sessions().DeleteMessagesAfter.
func (s *Store) DeleteMessagesAfter(ctx context.Context, sessionID, seq int64) (int64, error) {
	return s.Sessions().DeleteMessagesAfter(ctx, sessionID, seq)
}

// EndTurn forwards to Sessions().EndTurn.
func (s *Store) EndTurn(ctx context.Context, id int64, status TurnStatus) (bool, error) {
	return s.Sessions().EndTurn(ctx, id, status)
}

// FinishStreaming forwards to Sessions().FinishStreaming.
func (s *Store) FinishStreaming(ctx context.Context, id int64) error {
	return s.Sessions().FinishStreaming(ctx, id)
}

// HasSession forwards to Sessions().HasSession.
func (s *Store) HasSession(ctx context.Context, key ThreadKey) (bool, error) {
	return s.Sessions().HasSession(ctx, key)
}

// LastSeq forwards to Sessions().LastSeq.
func (s *Store) LastSeq(ctx context.Context, sessionID int64) (int64, error) {
	return s.Sessions().LastSeq(ctx, sessionID)
}

// LastTurn forwards to Sessions().LastTurn.
func (s *Store) LastTurn(ctx context.Context, sessionID int64) (Turn, error) {
	return s.Sessions().LastTurn(ctx, sessionID)
}

// Messages forwards to Sessions().Messages.
func (s *Store) Messages(ctx context.Context, sessionID int64) ([]Message, error) {
	return s.Sessions().Messages(ctx, sessionID)
}

// PostedStreaming forwards to Sessions().PostedStreaming.
func (s *Store) PostedStreaming(ctx context.Context, id int64, messageID, text string) error {
	return s.Sessions().PostedStreaming(ctx, id, messageID, text)
}

// RecordStreaming forwards to Sessions().RecordStreaming.
func (s *Store) RecordStreaming(ctx context.Context, m PostedMessage) (PostedMessage, error) {
	return s.Sessions().RecordStreaming(ctx, m)
}

// RunningTurns forwards to Sessions().RunningTurns.
func (s *Store) RunningTurns(ctx context.Context) ([]Turn, error) {
	return s.Sessions().RunningTurns(ctx)
}

// Session forwards to Sessions().Session.
func (s *Store) Session(ctx context.Context, id int64) (Session, error) {
	return s.Sessions().Session(ctx, id)
}

// SessionFor forwards to Sessions().SessionFor.
func (s *Store) SessionFor(ctx context.Context, key ThreadKey) (sess Session, created bool, err error) {
	return s.Sessions().SessionFor(ctx, key)
}

// SetSessionCwd forwards to Sessions().SetSessionCwd.
func (s *Store) SetSessionCwd(ctx context.Context, id int64, cwd string) error {
	return s.Sessions().SetSessionCwd(ctx, id, cwd)
}

// StreamingMessages forwards to Sessions().StreamingMessages.
func (s *Store) StreamingMessages(ctx context.Context) ([]PostedMessage, error) {
	return s.Sessions().StreamingMessages(ctx)
}

// Transcripts forwards to Sessions().Transcripts.
func (s *Store) Transcripts(ctx context.Context, sessionID int64) ([]Transcript, error) {
	return s.Sessions().Transcripts(ctx, sessionID)
}

// UpdateStreamingText forwards to Sessions().UpdateStreamingText.
func (s *Store) UpdateStreamingText(ctx context.Context, id int64, text string) error {
	return s.Sessions().UpdateStreamingText(ctx, id, text)
}

// Checks.

// CheckPostFor forwards to Checks().CheckPostFor.
func (s *Store) CheckPostFor(ctx context.Context, schedule, platform, channel, day string) (checks.CheckPost, error) {
	return s.Checks().CheckPostFor(ctx, schedule, platform, channel, day)
}

// LastCheckRunStart forwards to Checks().LastCheckRunStart.
func (s *Store) LastCheckRunStart(ctx context.Context, schedule string) (time.Time, error) {
	return s.Checks().LastCheckRunStart(ctx, schedule)
}

// LastCheckRuns forwards to Checks().LastCheckRuns.
func (s *Store) LastCheckRuns(ctx context.Context, schedule string, limit int) ([]checks.CheckRun, error) {
	return s.Checks().LastCheckRuns(ctx, schedule, limit)
}

// RecordCheckPost forwards to Checks().RecordCheckPost.
func (s *Store) RecordCheckPost(ctx context.Context, p checks.CheckPost) error {
	return s.Checks().RecordCheckPost(ctx, p)
}

// SaveCheckRun forwards to Checks().SaveCheckRun.
func (s *Store) SaveCheckRun(ctx context.Context, run checks.CheckRun) (checks.CheckRun, error) {
	return s.Checks().SaveCheckRun(ctx, run)
}

// Audit.

// Audit forwards to Audit().Audit.
func (s Flat) Audit(ctx context.Context, e AuditEntry) error {
	return s.Store.Audit().Audit(ctx, e)
}

// AuditTrail forwards to Audit().AuditTrail.
func (s *Store) AuditTrail(ctx context.Context, subject string) ([]AuditEntry, error) {
	return s.Audit().AuditTrail(ctx, subject)
}
