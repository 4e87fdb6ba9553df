package slack

// TaskSign is (*Connector).taskSign, which UpdateTask calls once a card
// is shown: the tests of signs drive it without a stream.
var TaskSign = (*Connector).taskSign
