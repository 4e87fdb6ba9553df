// Package connectors holds the platform-neutral model (Event, Message, Ref,
// Limits) and the Connector interface that every chat platform implements.
package connectors
