package slack

// TaskSign is (*Connector).taskSign, for the tests of signs until
// UpdateTask calls it.
var TaskSign = (*Connector).taskSign
