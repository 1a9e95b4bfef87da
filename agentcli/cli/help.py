"""The help text of the commands that is more than a line: each command's one-line summary
(short enough that a command list never cuts it) and its Examples block. Kept apart from
agentcli.cli.app so that the wording is in one place, and a test can walk every command."""

from __future__ import annotations

# Each summary is short enough that a command list at 80 columns never cuts it
# (tests/test_help_text.py checks every one against the real list).
SUMMARIES = {
    "run": "Run one prompt to the end and exit.",
    "chat": "Chat with the model in a REPL.",
    "serve": "Serve AG-UI over HTTP to frontends.",
    "doctor": "What confines the commands the model runs here.",
    "plugins": "The installed plug-ins and the tools they add.",
    "models": "The models the configured providers offer.",
    "trust": "Trust a workspace's own configuration (or --list).",
    "completions": "Print the shell completion script.",
    "config": "Show and change the configuration.",
    "config show": "The effective settings and where each came from.",
    "config path": "Where the configuration files are.",
    "config set": "Set one key in a configuration file.",
    "sessions": "List, show, export, copy, rewind and remove sessions.",
    "sessions list": "The sessions, latest first.",
    "sessions show": "A session's transcript, readable.",
    "sessions export": "A session as JSON or Markdown.",
    "sessions copy": "Copy session files into a PostgreSQL thread store.",
    "sessions rm": "Remove a session.",
    "sessions rewind": "A session's files and conversation back to before a turn.",
    "policy": "Explain what the policy decides.",
    "policy explain": "What the policy would decide for a call, and why.",
    "tools": "The tools the model can call.",
    "tools list": "Every tool with its risk and where it comes from.",
    "mcp": "MCP servers: add, remove, list, login, logout; serve.",
    "mcp add": "Add an MCP server (stdio command or --url).",
    "mcp remove": "Remove an MCP server.",
    "mcp list": "Start each MCP server and show what it offers.",
    "mcp login": "Log in to an MCP server by URL (OAuth).",
    "mcp logout": "Forget an MCP server's OAuth tokens.",
    "mcp serve": "Lend agentcli's tools to another agent over MCP.",
}

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        'agentcli "why does the build fail?"',
        "agentcli -m openai:gpt-4.1-mini --yes 'fix the failing test'",
        "git diff | agentcli 'review this change'",
        "agentcli run doctor    # a prompt that is a command's name",
    ),
    "run": (
        "agentcli run 'summarise README.md'",
        "git diff | agentcli run 'write a commit message'",
        "agentcli run -o json --deny --allow 'run_shell(npm test *)' 'make the tests pass'",
        "agentcli run -c 'and now the docs'    # continue the latest session",
        "agentcli run doctor    # a prompt that is a command's name",
    ),
    "chat": (
        "agentcli chat",
        "agentcli chat -m anthropic:claude-sonnet-4-5 --cwd ~/project",
        "agentcli chat --resume 3f2a    # continue that session",
    ),
    "serve": (
        "agentcli serve --port 8765",
        "agentcli serve --token-env AGUI_TOKEN --cors-origin http://localhost:3000",
    ),
    "doctor": ("agentcli doctor", "agentcli doctor --json"),
    "plugins": ("agentcli plugins", "agentcli plugins --json"),
    "models": ("agentcli models", "agentcli models --base-url http://localhost:11434/v1"),
    "trust": ("agentcli trust", "agentcli trust ~/project --revoke", "agentcli trust --list"),
    "completions": (
        "agentcli completions bash > ~/.local/share/bash-completion/completions/agentcli",
        "agentcli completions fish > ~/.config/fish/completions/agentcli.fish",
    ),
    "config": ("agentcli config show", "agentcli config set model openai:gpt-4.1-mini"),
    "config show": ("agentcli config show", "agentcli config show --json --cwd ~/project"),
    "config path": ("agentcli config path",),
    "config set": (
        "agentcli config set model anthropic:claude-sonnet-4-5",
        "agentcli config set timeout 600",
        "agentcli config set policy.allow '[\"run_shell(npm test *)\"]' --project",
    ),
    "sessions": ("agentcli sessions list", "agentcli sessions show 3f2a"),
    "sessions list": (
        "agentcli sessions list",
        "agentcli sessions list -n 5 --query 'flaky test'",
        "agentcli sessions list --all --json",
    ),
    "sessions show": ("agentcli sessions show 3f2a",),
    "sessions export": (
        "agentcli sessions export 3f2a > session.json",
        "agentcli sessions export 3f2a --format markdown > session.md",
    ),
    "sessions copy": (
        "agentcli sessions copy --to postgresql://agentcli@127.0.0.1/agentcli",
        "agentcli sessions copy thread-3f2a --to postgresql://agentcli@127.0.0.1/agentcli",
    ),
    "sessions rm": ("agentcli sessions rm 3f2a",),
    "sessions rewind": (
        "agentcli sessions rewind 3f2a --to 2",
        "agentcli sessions rewind 3f2a --to 2 --files",
    ),
    "policy": ("agentcli policy explain run_shell 'rm -rf build'",),
    "policy explain": (
        "agentcli policy explain run_shell 'git push --force'",
        'agentcli policy explain write_file \'{"path": "src/app.py", "content": ""}\'',
        "agentcli policy explain --allow 'run_shell(npm test *)' run_shell 'npm test'",
        'echo \'{"command": "ls"}\' | agentcli policy explain --stdin',
    ),
    "tools": ("agentcli tools list",),
    "tools list": ("agentcli tools list", "agentcli tools list --json"),
    "mcp": ("agentcli mcp list", "agentcli mcp add time -- uvx mcp-server-time"),
    "mcp add": (
        "agentcli mcp add time -- uvx mcp-server-time",
        "agentcli mcp add files --project -- npx -y @modelcontextprotocol/server-filesystem .",
        "agentcli mcp add docs --url http://localhost:8000/mcp",
        "agentcli mcp add api --url http://localhost:9000/mcp --header 'X-Key: ${API_KEY}'",
        "agentcli mcp add old --url http://localhost:8000/sse --transport sse",
    ),
    "mcp remove": ("agentcli mcp remove time",),
    "mcp list": ("agentcli mcp list", "agentcli mcp list --json"),
    "mcp login": ("agentcli mcp login docs", "agentcli mcp login docs --no-browser"),
    "mcp logout": ("agentcli mcp logout docs",),
    "mcp serve": (
        "claude mcp add agentcli -- agentcli mcp serve",
        "agentcli mcp serve --allow 'run_shell(npm test *)'",
        "agentcli mcp serve --http 8766",
    ),
}


def examples(command: str) -> str:
    """The Examples block of a command's help (`\\b` keeps the lines as written)."""
    lines = "\n".join(f"  {line}" for line in EXAMPLES[command])
    return f"\b\nExamples:\n{lines}"
