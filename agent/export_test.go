package agent

// What the loop's external tests (package agent_test, which may use
// agent/persist and agent/tools) read of its internals.
var (
	PendingToolCalls = pendingToolCalls
	Prepare          = prepare
	TextOf           = textOf
	UserText         = userText
	SummaryPrompt    = summaryPrompt
)
