package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds the queries of one scrape: a database that does
// not answer within it shows as down rather than holding /metrics.
const scrapeTimeout = 2 * time.Second

// Collector reports, at each scrape, what the database holds of the work
// people wait on. The figures come from the rows, not from counters kept
// in memory, so they are right across restarts:
//
//   - opsbot_database_up: 1 when the queries below answered, else 0 (and
//     the others are left out of that scrape);
//   - opsbot_approvals_total{state}: requests decided, by final state
//     (approved, denied, expired);
//   - opsbot_approvals_pending: requests waiting for a decision now;
//   - opsbot_approvals_oldest_pending_age_seconds: how long the oldest of
//     them has waited (0 when none waits);
//   - opsbot_jobs_running: background jobs running now;
//   - opsbot_jobs_finished_total{state}: jobs ended, by state (succeeded,
//     failed, cancelled, interrupted).
func (s *Store) Collector() prometheus.Collector { return storeCollector{s} }

var (
	descDatabaseUp = prometheus.NewDesc("opsbot_database_up",
		"1 when the database answered the scrape's queries, else 0.", nil, nil)
	descApprovals = prometheus.NewDesc("opsbot_approvals_total",
		"Approval requests decided, by final state (approved, denied, expired).", []string{"state"}, nil)
	descPending = prometheus.NewDesc("opsbot_approvals_pending",
		"Approval requests waiting for a decision.", nil, nil)
	descOldest = prometheus.NewDesc("opsbot_approvals_oldest_pending_age_seconds",
		"How long the oldest pending approval request has waited; 0 when none waits.", nil, nil)
	descJobsRunning = prometheus.NewDesc("opsbot_jobs_running",
		"Background jobs running.", nil, nil)
	descJobsFinished = prometheus.NewDesc("opsbot_jobs_finished_total",
		"Background jobs ended, by state (succeeded, failed, cancelled, interrupted).", []string{"state"}, nil)
)

// storeCollector is the prometheus.Collector Store.Collector returns.
type storeCollector struct{ s *Store }

var _ prometheus.Collector = storeCollector{}

// Describe sends the descriptors of every metric Collect may send.
func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDatabaseUp, descApprovals, descPending, descOldest, descJobsRunning, descJobsFinished} {
		ch <- d
	}
}

// Collect queries the database and sends what it holds.
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	byState, err := countByState(ctx, c.s.read, "approvals")
	var oldest sql.NullInt64
	if err == nil {
		err = c.s.read.QueryRowContext(ctx, `SELECT MIN(created_at) FROM approvals WHERE state = 'pending'`).Scan(&oldest)
	}
	var jobs map[string]int
	if err == nil {
		jobs, err = countByState(ctx, c.s.read, "jobs")
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descDatabaseUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descDatabaseUp, prometheus.GaugeValue, 1)
	for _, st := range []approvals.ApprovalState{approvals.ApprovalApproved, approvals.ApprovalDenied, approvals.ApprovalExpired} {
		ch <- prometheus.MustNewConstMetric(descApprovals, prometheus.CounterValue, float64(byState[string(st)]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(byState[string(approvals.ApprovalPending)]))
	age := 0.0
	if oldest.Valid {
		age = max(c.s.Now().Sub(time.UnixMilli(oldest.Int64)).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(descJobsRunning, prometheus.GaugeValue, float64(jobs[string(hosts.JobRunning)]))
	for _, st := range []hosts.JobState{hosts.JobSucceeded, hosts.JobFailed, hosts.JobCancelled, hosts.JobInterrupted} {
		ch <- prometheus.MustNewConstMetric(descJobsFinished, prometheus.CounterValue, float64(jobs[string(st)]), string(st))
	}
}

// countByState counts table's rows by their state column (the table name
// is one of ours, never input).
func countByState(ctx context.Context, db *sql.DB, table string) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT state, COUNT(*) FROM `+table+` GROUP BY state`)
	if err != nil {
		return nil, wrap("count "+table, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, wrap("count "+table, err)
		}
		out[state] = n
	}
	return out, wrap("count "+table, rows.Err())
}
