package agent

// ModelError is a failure of the model's API worded for the person in the
// thread: what went wrong and what to do about it (wait, fix the key,
// start a new conversation). Its text names no address, no Go error and
// no secret. The providers' errors are ModelErrors; the bot shows their
// words, where any other failure shows only an id for the operator's log.
type ModelError interface {
	error
	// ModelFailure marks the error as worded for people.
	ModelFailure()
}
