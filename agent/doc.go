// Package agent is the LLM loop: a Provider streams model output, tools are
// dispatched by name from a registry, and a turn can be stopped (it still
// ends with an answer), held to a token budget, compacted, and resumed from
// stored history. It knows its tools only as Tool: the ones that run
// commands, read jobs or keep a plan live in agent/tools, the store's
// History, Notices and token ledger in agent/persist, so that the loop
// imports none of approvals, hosts or store.
package agent
