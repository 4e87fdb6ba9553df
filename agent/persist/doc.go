// Package persist keeps the agent's conversations and its job
// notifications in the SQLite store: History and Notices are the store's
// side of agent.History and agent.Notices, so that the loop itself
// imports no store.
package persist
