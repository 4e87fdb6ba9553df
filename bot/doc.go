// Package bot is the router: it maps platform threads to agent sessions,
// runs one turn at a time per thread, answers the deterministic chat
// commands, renders streamed answers by message edits (bot/render), posts
// approval cards and delivers job notifications.
//
// New builds the Bot and its parts once, from Deps; each part (cards,
// answers, runner, followUps, commands, recovery, jobNotices, threads,
// inbox) depends on small interfaces or functions of its own, never on
// the Bot. An event passes named stages (pipeline.go, stages.go):
// record → dedupe when it arrives, admit → route → queue on the inbox's
// router, session → turn → render → finish on its thread's worker.
package bot
