package connectortest

import "github.com/opsbot/opsbot/connectors"

// Alert summaries and plans: renderings whose goldens every connector
// keeps beside the corpus of Messages, posted after it (so that the
// corpus's message ids stay as they were).

// Summaries are the alert summary with its feedback buttons and the
// finished plan as a text card, by name.
func Summaries() map[string]connectors.Message {
	return map[string]connectors.Message{"alert_summary": alertSummary(), "plan_finished": planFinished()}
}

// alertSummary is an alert group's summary once its investigation is
// done (bot/alertsroot.go's rootMessage), with the feedback buttons an
// answer has: Slack shows them as a context_actions block; a platform
// without them shows the summary alone.
func alertSummary() connectors.Message {
	return connectors.Message{
		Text: "🔴 **FIRING** · DiskAlmostFull on web-03\n" +
			"Firing since 09:12 (18 min) · source `alertmanager`\n\n" +
			"**Alerts** (1 firing, 0 resolved)\n" +
			"• 🔴 DiskAlmostFull web-03 since 09:12: / is 93% full\n\n" +
			"**Investigation:** done on `web-03` in 41s\n" +
			"**Suspected cause:** rotated logs of `app` are never compressed\n" +
			"**Evidence:**\n" +
			"• `df -h /` on web-03 → exit 0\n" +
			"• `du -sh /var/log/app` on web-03 → exit 0\n" +
			"• proposed, not run: `logrotate -f /etc/logrotate.d/app`\n" +
			"**Next steps:** approve the logrotate run, then check `df -h /` again",
		ThreadName: "alert: DiskAlmostFull on web-03",
		Feedback:   "57", // the investigation's stored turn, as an answer's
	}
}

// PlanTitle and PlanSteps are a finished plan as a plan block shows it
// (bot/plancard_slack.go's planSteps): every step final, one in error,
// one with its verify.
const PlanTitle = "Plan 3 by @alice — Goal: free disk on web-03"

// PlanSteps are PlanTitle's steps, all final.
func PlanSteps() []connectors.Task {
	return []connectors.Task{
		{ID: "step-1", Title: "`logrotate -f /etc/logrotate.d/app` on `web-03`", Status: connectors.TaskComplete,
			Output: "exit 0 in 2.104s"},
		{ID: "step-2", Title: "`systemctl restart app` on `web-03`", Status: connectors.TaskComplete,
			Output: "exit 0 in 1.02s", Details: "verify ✅ `systemctl is-active app` — exit 0"},
		{ID: "step-3", Title: "`rm /var/log/app/old.tar` on `web-03`", Status: connectors.TaskError,
			Output: "exit 1 in 12ms: `rm: cannot remove '/var/log/app/old.tar': No such file or directory`"},
	}
}

// planFinished is the finished plan as a text card (bot/plancard.go's
// progressCard), what a platform without plan blocks shows.
func planFinished() connectors.Message {
	return connectors.Message{Text: "**Plan 3 by @alice**\nGoal: free disk on web-03\n" +
		"**Step 1** ✅ `logrotate -f /etc/logrotate.d/app` on `web-03` — exit 0 in 2.104s\n" +
		"**Step 2** ✅ `systemctl restart app` on `web-03` — exit 0 in 1.02s\n" +
		"   verify ✅ `systemctl is-active app` — exit 0\n" +
		"**Step 3** ❌ `rm /var/log/app/old.tar` on `web-03` — exit 1 in 12ms: " +
		"`rm: cannot remove '/var/log/app/old.tar': No such file or directory`"}
}
