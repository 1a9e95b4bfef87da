"""The options of the agent commands (`run`, `chat`), declared once, without the CLI framework.

agentcli.cli.app turns this table into Typer parameters (so `--help`, completion and every usage
error come from Typer), and `parse` reads a plain, well-formed command line with it, so that
`run` and `chat` can start without importing Typer (and through it pydantic). `parse` only
answers when it is sure: anything unusual (`--help`, an unknown or malformed option, a
value that needs converting with care) returns None and Typer parses the line instead, so
behaviour and messages stay Typer's.

Adding an option shared by `run` and `chat` is one `Option(...)` line below, plus its
keyword in `agentcli.assembly.resolve_settings` (where its value is used).
"""

from __future__ import annotations

import os
from typing import Any

from agentcli.records import dataclass

BOTH = ("run", "chat")


@dataclass(frozen=True, slots=True)
class Option:
    name: str  # the keyword it arrives as
    flags: tuple[str, ...]
    kind: type  # str, int, float, bool or list (of str, repeatable)
    help: str
    commands: tuple[str, ...] = BOTH
    default: Any = None
    show_default: bool = True
    to_settings: bool = True  # a keyword of resolve_settings (else the command's own)
    metavar: str | None = None  # what the value is, in the help: RULE, SECONDS, N, URL...


OPTIONS: tuple[Option, ...] = (
    Option(
        "model",
        ("--model", "-m"),
        str,
        "PROVIDER:MODEL, e.g. openai:gpt-4.1-mini [env AGENTCLI_MODEL]",
        metavar="MODEL",
    ),
    Option(
        "base_url",
        ("--base-url",),
        str,
        "OpenAI-compatible server URL [env OPENAI_BASE_URL]",
        metavar="URL",
    ),
    Option("system", ("--system",), str, "Extra system instructions.", metavar="TEXT"),
    Option(
        "max_steps",
        ("--max-steps",),
        int,
        "Most model steps in one run [default: 20]",
        show_default=False,
        metavar="N",
    ),
    Option(
        "timeout",
        ("--timeout",),
        float,
        "Wall-clock limit for the whole run, in seconds.",
        metavar="SECONDS",
    ),
    Option(
        "cwd",
        ("--cwd",),
        str,
        "Workspace root that tools are confined to [default: .]",
        metavar="PATH",
    ),
    Option(
        "output",
        ("--output", "-o"),
        str,
        "text, json or jsonl (AG-UI events).",
        commands=("run",),
        default="text",
        to_settings=False,
        metavar="FORMAT",
    ),
    Option("yes", ("--yes", "-y"), bool, "Approve every tool call that would ask.", default=False),
    Option("deny", ("--deny",), bool, "Deny every tool call that would ask.", default=False),
    Option(
        "allow",
        ("--allow",),
        list,
        "Allow calls matching RULE, e.g. 'run_shell(npm test *)'.",
        metavar="RULE",
    ),
    Option(
        "forbid", ("--forbid",), list, "Deny calls matching RULE (beats --yes).", metavar="RULE"
    ),
    Option(
        "continue_",
        ("--continue", "-c"),
        bool,
        "Continue the latest session of this workspace.",
        default=False,
        to_settings=False,
    ),
    Option(
        "resume",
        ("--resume",),
        str,
        "Continue the session with this id (or a prefix).",
        to_settings=False,
        metavar="ID",
    ),
    Option("debug", ("--debug",), bool, "Show tracebacks for internal errors.", default=False),
    Option(
        "sandbox",
        ("--sandbox",),
        str,
        "auto: commands run in an OS sandbox (see `agentcli doctor`); none: no sandbox.",
        metavar="MODE",
    ),
    Option(
        "allow_network",
        ("--allow-network",),
        bool,
        "Let --yes grant sandboxed commands the network.",
        default=False,
    ),
    Option(
        "add_dir",
        ("--add-dir",),
        list,
        "Let every tool also reach DIR (read-write; DIR:ro to read only).",
        metavar="DIR",
    ),
    Option(
        "agent",
        ("--agent",),
        str,
        "URL of a remote AG-UI agent to use instead of a model.",
        metavar="URL",
    ),
)

BY_NAME = {option.name: option for option in OPTIONS}

# `policy explain`: what the policy would decide (agentcli.cli.commands.policy_commands).
EXPLAIN_OPTIONS: tuple[Option, ...] = (
    Option("as_json", ("--json",), bool, "Print JSON.", default=False),
    Option(
        "stdin",
        ("--stdin",),
        bool,
        'Explain many calls: JSON lines in ({"tool": T, "args": {...}} or {"command": C}), '
        "one JSON decision per line out.",
        default=False,
    ),
    *(BY_NAME[name] for name in ("yes", "deny", "allow", "forbid", "add_dir")),
    Option("cwd", ("--cwd",), str, "The workspace [default: .]", metavar="PATH"),
)

# `serve`: the agent's own options (but a remote agent or a session to continue) and where
# to listen (agentcli.cli.commands.serve_command).
SERVE_OPTIONS: tuple[Option, ...] = (
    Option(
        "host",
        ("--host",),
        str,
        "Address to listen on.",
        commands=("serve",),
        default="127.0.0.1",
        to_settings=False,
        metavar="HOST",
    ),
    Option(
        "port",
        ("--port",),
        int,
        "Port to listen on.",
        commands=("serve",),
        default=8765,
        to_settings=False,
        metavar="PORT",
    ),
    Option(
        "token_env",
        ("--token-env",),
        str,
        "Environment variable holding the bearer token clients must send "
        "[default: one is made and printed].",
        commands=("serve",),
        to_settings=False,
        metavar="VAR",
    ),
    Option(
        "no_token",
        ("--no-token",),
        bool,
        "Require no token (loopback only; not with --yes).",
        commands=("serve",),
        default=False,
        to_settings=False,
    ),
    Option(
        "store",
        ("--store",),
        str,
        "Keep threads in PostgreSQL (postgresql://USER@HOST/DB; the password in "
        "PGPASSWORD), shared by replicas [default: the sessions directory].",
        commands=("serve",),
        to_settings=False,
        metavar="URL",
    ),
    Option(
        "cors_origin",
        ("--cors-origin",),
        list,
        "A browser origin allowed to call the server.",
        commands=("serve",),
        to_settings=False,
        metavar="ORIGIN",
    ),
    *(o for o in OPTIONS if o.to_settings and o.name != "agent"),
)

# `mcp serve`: the tools lent, where (stdio, or --http on loopback), and the policy's
# options (agentcli.cli.commands.mcp_serve_command).
MCP_SERVE_OPTIONS: tuple[Option, ...] = (
    Option(
        "http",
        ("--http",),
        int,
        "Serve streamable HTTP on 127.0.0.1:PORT (/mcp) instead of stdio.",
        commands=("mcp serve",),
        to_settings=False,
        metavar="PORT",
    ),
    Option(
        "token_env",
        ("--token-env",),
        str,
        "With --http: the variable holding the bearer token clients must send "
        "[default: one is made and printed on stderr].",
        commands=("mcp serve",),
        to_settings=False,
        metavar="VAR",
    ),
    Option(
        "with_configured",
        ("--with-configured",),
        bool,
        "Also lend the configured tools: command tools, plug-ins and MCP servers.",
        commands=("mcp serve",),
        default=False,
        to_settings=False,
    ),
    *(
        BY_NAME[name]
        for name in ("yes", "deny", "allow", "forbid", "sandbox", "allow_network", "add_dir")
    ),
    Option(
        "cwd",
        ("--cwd",),
        str,
        "Workspace root that tools are confined to [default: .]",
        metavar="PATH",
    ),
    BY_NAME["debug"],
)

# Each command parsed here: its positional arguments (all optional) and its options.
COMMANDS: dict[str, tuple[tuple[str, ...], tuple[Option, ...]]] = {
    "run": (("prompt",), tuple(o for o in OPTIONS if "run" in o.commands)),
    "chat": ((), tuple(o for o in OPTIONS if "chat" in o.commands)),
    "policy explain": (("tool", "args"), EXPLAIN_OPTIONS),
    "serve": ((), SERVE_OPTIONS),
    "mcp serve": ((), MCP_SERVE_OPTIONS),
}


# Every first word that names a subcommand (a test keeps this equal to the Typer app's).
SUBCOMMANDS = (
    "run",
    "chat",
    "serve",
    "doctor",
    "plugins",
    "models",
    "trust",
    "completions",
    "config",
    "sessions",
    "policy",
    "tools",
    "mcp",
)
TOP_LEVEL_FLAGS = ("--help", "-h", "--version", "-V")


def entry_args(args: list[str], stdin_is_tty: bool) -> list[str]:
    """The command line with its usual shortcuts spelt out: `agentcli "a prompt"` and
    `agentcli -m X "a prompt"` are `agentcli run ...`; `agentcli` and `agentcli --yes` (no
    prompt) are `agentcli chat ...` on a terminal, else `agentcli run ...` (the prompt is
    stdin). A first word that names a subcommand is that subcommand; a prompt that is one
    is `agentcli run "doctor"`. Raises UsageError for unquoted words (`agentcli fix it`)."""
    if args[:1] and (args[0] in SUBCOMMANDS or args[0] in TOP_LEVEL_FLAGS):
        return args
    words = _positionals(args)
    if len(words) > 1 and not _unknown_option(args):  # else Typer names the unknown option
        from agentcli.errors import UsageError

        raise UsageError(_not_a_command(words))
    if words or not stdin_is_tty:
        return ["run", *args]
    return ["chat", *args]


def lift_debug(args: list[str]) -> tuple[list[str], bool]:
    """(the command line, whether a traceback is asked for): `--debug` may come anywhere
    before `--`, as the internal error's line asks for it. Before a command it moves after
    its name (`agentcli --debug run hi`); a command without a --debug of its own (`config
    show --debug`) is given the line without it."""
    cut = args.index("--") if "--" in args else len(args)
    if "--debug" not in args[:cut]:
        return args, False
    words = _positionals(args[:cut])
    if not words or words[0] not in SUBCOMMANDS:
        return args, False  # a prompt: run's own --debug
    command = " ".join(words[:2]) if " ".join(words[:2]) in COMMANDS else words[0]
    rest = [token for token in args[:cut] if token != "--debug"] + args[cut:]
    if command not in COMMANDS or BY_NAME["debug"] not in COMMANDS[command][1]:
        return rest, True
    at = rest.index(words[0]) + len(command.split())
    return [*rest[:at], "--debug", *rest[at:]], True


def _positionals(args: list[str]) -> list[str]:
    takes_value = {flag for o in OPTIONS if o.kind is not bool for flag in o.flags}
    words: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return words + args[i + 1 :]
        if token == "-" or not token.startswith("-"):
            words.append(token)
        i += 2 if token in takes_value else 1
    return words


def _unknown_option(args: list[str]) -> bool:
    known = {flag for o in OPTIONS for flag in o.flags}
    for token in args:
        if token == "--":
            return False
        if token.startswith("-") and token != "-" and token.split("=")[0] not in known:
            return True
    return False


def _not_a_command(words: list[str]) -> str:
    import difflib
    import shlex

    if words[0] in SUBCOMMANDS:  # `agentcli -y config show`: run's options, then a command
        return (
            f"the options before {words[0]!r} are those of run and chat; write the command "
            f"first, its own options after it: agentcli {shlex.join(words)}"
        )
    close = difflib.get_close_matches(words[0], SUBCOMMANDS, n=1)
    hint = f" (did you mean `agentcli {close[0]}`?)" if close else ""
    quoted = shlex.quote(" ".join(words))
    return (
        f"{words[0]!r} is not a command{hint}; to run a prompt of several words, quote it: "
        f"agentcli {quoted}"
    )


def options_of(command: str) -> tuple[Option, ...]:
    return COMMANDS[command][1]


def split_settings(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resolve_settings' keywords, the command's own values such as continue_ and resume)."""
    flags = {k: v for k, v in values.items() if k in BY_NAME and BY_NAME[k].to_settings}
    own = {k: v for k, v in values.items() if k not in flags}
    return flags, own


def _digits(text: str) -> bool:
    # 0-9 only, and not so many that int() refuses them: anything else is left to Typer.
    return len(text) <= 100 and text.isascii() and text.isdigit()


def _convert(option: Option, text: str) -> Any:
    """The value as Typer would give it, or None when only Typer can say (or complain)."""
    if option.kind is int:
        return int(text) if _digits(text.removeprefix("-")) else None
    if option.kind is float:
        whole, dot, fraction = text.removeprefix("-").partition(".")
        return float(text) if _digits(whole) and (not dot or _digits(fraction)) else None
    if text.startswith("-") and text != "-":
        return None  # a value that looks like an option: Typer decides what it is
    return text


def parse(command: str, args: list[str]) -> dict[str, Any] | None:
    """The values of a plain command line (a key of COMMANDS) (every option present, defaults
    filled in), or None to let Typer parse it."""
    if any(name.startswith("_AGENTCLI_COMPLETE") for name in os.environ):
        return None  # shell completion is Typer's
    names, options = COMMANDS[command]
    flags = {flag: option for option in options for flag in option.flags}
    values: dict[str, Any] = {o.name: ([] if o.kind is list else o.default) for o in options}
    positional: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "-" or not token.startswith("-"):
            positional.append(token)
            continue
        option = flags.get(token)
        if option is None:
            return None  # --help, --, --flag=value, -yc, a typo: all Typer's
        if option.kind is bool:
            values[option.name] = True
            continue
        if i >= len(args):
            return None
        value = _convert(option, args[i])
        i += 1
        if value is None:
            return None
        if option.kind is list:
            values[option.name].append(value)
        else:
            values[option.name] = value
    if len(positional) > len(names):
        return None  # Typer's "unexpected extra argument"
    values.update(zip(names, [*positional, *[None] * len(names)], strict=False))
    for option in options:  # Typer gives an empty repeatable option as None
        if option.kind is list and not values[option.name]:
            values[option.name] = None
    return values
