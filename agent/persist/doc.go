// Package persist keeps the agent's conversations, its job notifications
// and each thread's daily token count in the SQLite store: History,
// Notices and Tokens are the store's side of agent.History, agent.Notices
// and agent.TokenLedger, so that the loop itself imports no store.
package persist
