"""Terminal rendering: streamed Markdown, and later the REPL and approval prompts."""
