// Package agent is the LLM loop: a Provider streams model output, tools are
// dispatched by name from a registry, and a turn can be cancelled and rolled
// back, compacted, and resumed from stored history.
package agent
