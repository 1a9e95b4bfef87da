"""One session's agent: the loop of model steps, the executor of their tool calls, and what
bounds them."""
