package streamretry

// ModelFailure makes Unreported an agent.ModelError: its message is for
// people.
func (*Unreported) ModelFailure() {}
