// Package agent is the LLM loop: a Provider streams model output, tools are
// dispatched by name from a registry, and a turn can be cancelled and rolled
// back, compacted, and resumed from stored history. Its command tools
// (run_command, start_job, skill scripts) ask an approvals.Guard and run
// through a hosts.Executor, as the chat's `run` and the terminal do.
package agent
