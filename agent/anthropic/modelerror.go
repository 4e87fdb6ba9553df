package anthropic

// ModelFailure makes Error an agent.ModelError: its message is for people.
func (*Error) ModelFailure() {}
