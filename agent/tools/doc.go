// Package tools holds the agent's tools, one file each, with the
// description the model reads kept beside it as an embedded text
// (run_command.md for run_command.go). The tools that run commands
// (run_command, start_job, tail_file, run_skill_script) ask an
// approvals.Guard and run through a hosts.Executor, as the chat's `run`
// and the terminal do; the jobs tools read the store. The loop (package
// agent) knows them only as agent.Tool, so that it imports none of
// approvals, hosts or store.
package tools
