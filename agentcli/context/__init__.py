"""What the model is told: the system prompt, the project's instructions, AGENTS.md."""
