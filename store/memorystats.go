package store

import (
	"context"
	"database/sql"
	"time"
)

// DayStats is one UTC day of the bot's use: the numbers a team needs to
// decide to keep it (issue 33).
type DayStats struct {
	Day string // YYYY-MM-DD, UTC
	// Answers is the questions answered: chat turns that finished with
	// an answer (one per question, however many steps and texts the
	// model took; a turn stopped, failed or cut off is not one, nor an
	// alert investigation, nor a turn opsbot began with a note of its own:
	// a plan's results, a job's end), on the day the turn ended. Approvals is the
	// requests approved, Commands the commands that ran (audit
	// command.end rows, health checks not counted).
	Answers, Approvals, Commands int
	Tokens                       TokenUsage
}

// DailyStats lists, oldest first, every UTC day since since (its date)
// that had any use.
func (m *Memory) DailyStats(ctx context.Context, since time.Time) ([]DayStats, error) {
	from := time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
	rows, err := m.db.read.QueryContext(ctx, `WITH days(day, answers, approvals, commands, input, cached, output) AS (
		SELECT strftime('%Y-%m-%d', t.ended_at / 1000, 'unixepoch'), 1, 0, 0, 0, 0, 0 FROM turns t
			WHERE t.status = 'done' AND t.ended_at >= :from AND EXISTS (SELECT 1 FROM memory_docs d
				WHERE d.session_id = t.session_id AND d.kind = 'message' AND d.role = 'assistant' AND d.seq > t.start_seq
				AND d.at BETWEEN t.started_at AND t.ended_at)
			AND NOT EXISTS (SELECT 1 FROM messages q WHERE q.session_id = t.session_id AND q.seq = t.start_seq + 1
				AND q.role = 'user' AND json_valid(q.content)
				AND json_extract(q.content, '$[0].text') LIKE '[opsbot note, not the person''s words]%')
		UNION ALL SELECT strftime('%Y-%m-%d', decided_at / 1000, 'unixepoch'), 0, 1, 0, 0, 0, 0 FROM approvals
			WHERE state = 'approved' AND decided_at >= :from
		UNION ALL SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch'), 0, 0, 1, 0, 0, 0 FROM audit
			WHERE action = 'command.end' AND actor != 'scheduler' AND at >= :from
		UNION ALL SELECT day, 0, 0, 0, input, cached, output FROM token_usage WHERE day >= :fromDay)
		SELECT day, sum(answers), sum(approvals), sum(commands), sum(input), sum(cached), sum(output)
		FROM days GROUP BY day ORDER BY day`,
		namedArg("from", from.UnixMilli()), namedArg("fromDay", from.Format("2006-01-02")))
	if err != nil {
		return nil, wrap("daily stats", err)
	}
	defer rows.Close()
	var out []DayStats
	for rows.Next() {
		var d DayStats
		if err := rows.Scan(&d.Day, &d.Answers, &d.Approvals, &d.Commands, &d.Tokens.Input, &d.Tokens.Cached, &d.Tokens.Output); err != nil {
			return nil, wrap("daily stats", err)
		}
		out = append(out, d)
	}
	return out, wrap("daily stats", rows.Err())
}

func namedArg(name string, v any) any { return sql.Named(name, v) }
