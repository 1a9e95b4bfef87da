"""The conversation as data: messages, the event stream of a run, and its fold."""
