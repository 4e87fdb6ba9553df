package web

// BotUp lets the external tests wait until Start has taken the Handler.
func (c *Connector) BotUp() bool { return c.botUp() }
