package bot

// QueuedNote is the bot's answer to a message that waits behind its
// thread's running work: a front that sends the next line only once the
// last answer is finished (the terminal) may hide it.
const QueuedNote = queuedNote
