"""The command line: parse, wire, exit. Everything heavy is imported inside the commands,
so `--help` stays fast."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from agentcli import __version__
from agentcli.cli.help import SUMMARIES, examples
from agentcli.cli.options import Option, options_of

TOP_HELP = """A command-line agent shell: a model answers, calling tools under a risk policy.

\b
  agentcli                   chat in the REPL (as agentcli chat)
  agentcli "PROMPT"          run one prompt and exit (as agentcli run "PROMPT")
  agentcli -m MODEL "PROMPT" the options of run and chat may come first
  git diff | agentcli        no terminal on stdin: stdin is the prompt

A prompt that is also a command's name runs with `run`: agentcli run "doctor"."""


def _help_width() -> int:
    """The terminal's width, less a margin, within 30..80 (click's own floor is 50, wider
    than a 40-column terminal)."""
    import shutil

    return max(30, min(shutil.get_terminal_size().columns - 2, 80))


app = typer.Typer(
    name="agentcli",
    help=TOP_HELP,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    no_args_is_help=True,
    epilog=examples(""),
    # Help fits the terminal (80 columns at most); the cached top-level help is 80 wide.
    context_settings={"help_option_names": ["-h", "--help"], "terminal_width": _help_width()},
)


def _typer_option(option: Option) -> Any:
    """The Typer annotation of an option declared in agentcli.cli.options."""
    kind = {list: list[str] | None, bool: bool}.get(option.kind, option.kind | None)
    text = f"{option.help} (repeatable)" if option.kind is list else option.help
    info = typer.Option(
        *option.flags, help=text, show_default=option.show_default, metavar=option.metavar
    )
    return Annotated[kind, info]  # type: ignore[valid-type]


def _plain_argument_names() -> None:
    """An argument's name (PROMPT, TOOL) says what it is; Typer would add its Python type
    (`PROMPT <str>`), which means nothing to a user."""
    from typer.core import TyperArgument

    TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]


_plain_argument_names()


def _command_info(name: str, help: str | None = None) -> dict[str, Any]:
    """The help of a command besides its options: summary, description and examples."""
    return {"short_help": SUMMARIES[name], "help": help, "epilog": examples(name)}


def _command(name: str, action: Callable[[dict[str, Any]], int], arguments: list) -> Any:
    """A Typer command taking `arguments` and the options agentcli.cli.options declares
    for `name`; it hands them all to `action` as one dict."""

    def command(**values: Any) -> None:
        raise typer.Exit(action(values))

    kind = inspect.Parameter.KEYWORD_ONLY
    params = [*arguments] + [
        inspect.Parameter(o.name, kind, annotation=_typer_option(o), default=o.default)
        for o in options_of(name)
    ]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = name.replace(" ", "_")
    return command


def _argument(name: str, help: str) -> inspect.Parameter:
    info = typer.Argument(help=help, show_default=False, metavar=name.upper())
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Parameter(name, kind, annotation=Annotated[str | None, info], default=None)


def _version(value: bool) -> None:
    if value:
        print(f"agentcli {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """A command-line agent shell (see TOP_HELP)."""


def _run(values: dict[str, Any]) -> int:
    from agentcli.cli.commands import agent_commands

    return agent_commands.run(values)


def _chat(values: dict[str, Any]) -> int:
    from agentcli.cli.commands import agent_commands

    return agent_commands.chat(values)


app.command(
    "run",
    **_command_info(
        "run", "Run one prompt to the end and exit. Piped stdin is the prompt, or context below it."
    ),
)(_command("run", _run, [_argument("prompt", "The instruction. `-` or none: read it from stdin.")]))
app.command(
    "chat",
    **_command_info(
        "chat",
        "Chat with the model in a REPL. With stdin not a terminal, runs stdin as one prompt.",
    ),
)(_command("chat", _chat, []))


def _serve(values: dict[str, Any]) -> int:  # _guarded exits with the code
    from agentcli.cli.commands.serve_command import serve_command
    from agentcli.cli.options import options_of

    flags = {o.name: values[o.name] for o in options_of("serve") if o.to_settings}
    _guarded(
        lambda: serve_command(
            values["host"],
            values["port"],
            values["token_env"],
            values["cors_origin"] or [],
            flags,
            no_token=values["no_token"],
            store=values["store"],
        )
    )
    return 0


app.command(
    "serve",
    **_command_info(
        "serve", "Serve AG-UI over HTTP: frontends POST a RunAgentInput and get the run's events."
    ),
)(_command("serve", _serve, []))


config_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, **_command_info("config", SUMMARIES["config"])
)
app.add_typer(config_app, name="config")
Workspace = Annotated[
    str | None, typer.Option("--cwd", help="The workspace [default: .]", metavar="PATH")
]


def _guarded(action) -> None:  # type: ignore[no-untyped-def]
    """Runs a command's action; a user-facing error is one line and its exit code."""
    from agentcli.cli.one_shot import print_error
    from agentcli.errors import AgentCliError

    try:
        code = action()
    except AgentCliError as error:
        print_error(str(error))
        raise typer.Exit(error.exit_code) from None
    raise typer.Exit(code)


def _workspace(cwd: str | None):  # type: ignore[no-untyped-def]
    from agentcli.cli.commands import workspace_dir

    return workspace_dir(cwd)


@config_app.command("show", **_command_info("config show"))
def config_show(
    cwd: Workspace = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The effective settings, each with where it came from."""
    from agentcli.cli.commands import config_commands

    _guarded(lambda: config_commands.show(_workspace(cwd), as_json))


@config_app.command("path", **_command_info("config path"))
def config_path(cwd: Workspace = None) -> None:
    """Where the user and project configuration files are."""
    from agentcli.cli.commands import config_commands

    _guarded(lambda: config_commands.paths(_workspace(cwd)))


@config_app.command("set", **_command_info("config set"))
def config_set(
    key: Annotated[
        str, typer.Argument(help="Dotted key, e.g. model or policy.allow.", metavar="KEY")
    ],
    value: Annotated[
        str, typer.Argument(help='A TOML value (5, true, ["a"]) or a string.', metavar="VALUE")
    ],
    project: Annotated[
        bool, typer.Option("--project", help="Write the project file, not the user file.")
    ] = False,
    cwd: Workspace = None,
) -> None:
    """Set one key in the user configuration file (or the project's, with --project)."""
    from agentcli.cli.commands import config_commands

    _guarded(lambda: config_commands.set_key(_workspace(cwd), key, value, project))


sessions_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, **_command_info("sessions", SUMMARIES["sessions"])
)
app.add_typer(sessions_app, name="sessions")
SessionId = Annotated[
    str, typer.Argument(help="Session id, or a unique prefix of it.", metavar="ID")
]
StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Read a PostgreSQL thread store (postgresql://USER@HOST/DB; PGPASSWORD).",
        metavar="URL",
    ),
]


@sessions_app.command("list", **_command_info("sessions list"))
def sessions_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    limit: Annotated[
        int | None, typer.Option("-n", help="Show the latest N only.", metavar="N")
    ] = None,
    query: Annotated[
        str | None,
        typer.Option(
            "--query", help="Only sessions whose first prompt holds TEXT.", metavar="TEXT"
        ),
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="Also the sessions without a message.")
    ] = False,
    store: StoreOption = None,
) -> None:
    """The sessions, latest first: id, start time, turns, tokens, model, workspace and
    first prompt. Sessions without a message are left out unless --all."""
    from agentcli.cli.commands import session_commands

    _guarded(
        lambda: session_commands.list_sessions(
            as_json, limit=limit, query=query, show_all=show_all, store=store
        )
    )


@sessions_app.command("show", **_command_info("sessions show"))
def sessions_show(session_id: SessionId, store: StoreOption = None) -> None:
    """A session's transcript, readable."""
    from agentcli.cli.commands import session_commands

    _guarded(lambda: session_commands.show(session_id, store))


@sessions_app.command("export", **_command_info("sessions export"))
def sessions_export(
    session_id: SessionId,
    fmt: Annotated[
        str, typer.Option("--format", help="json or markdown.", metavar="FORMAT")
    ] = "json",
    store: StoreOption = None,
) -> None:
    """A session as JSON (header, messages, events) or Markdown."""
    from agentcli.cli.commands import session_commands

    _guarded(lambda: session_commands.export(session_id, fmt, store))


@sessions_app.command("copy", **_command_info("sessions copy"))
def sessions_copy(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The PostgreSQL store (postgresql://USER@HOST/DB; PGPASSWORD).",
            metavar="URL",
        ),
    ],
    session_ids: Annotated[
        list[str] | None,
        typer.Argument(help="Session ids or unique prefixes (default: all).", metavar="ID"),
    ] = None,
) -> None:
    """Copy session files into a PostgreSQL thread store, row for line. Run again, it adds
    only what the files gained. Exit 1: a session the store holds with other records."""
    from agentcli.cli.commands import session_commands

    _guarded(lambda: session_commands.copy(session_ids or [], to))


@sessions_app.command("rm", **_command_info("sessions rm"))
def sessions_rm(session_id: SessionId) -> None:
    """Remove a session file."""
    from agentcli.cli.commands import session_commands

    _guarded(lambda: session_commands.remove(session_id))


@sessions_app.command("rewind", **_command_info("sessions rewind"))
def sessions_rewind(
    session_id: SessionId,
    to: Annotated[
        int,
        typer.Option("--to", help="The turn to go back to before (1 is the first).", metavar="N"),
    ],
    files: Annotated[bool, typer.Option("--files", help="Only the files.")] = False,
    chat: Annotated[bool, typer.Option("--chat", help="Only the conversation.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Also overwrite files changed since (their content is kept)."),
    ] = False,
) -> None:
    """Take a session's files and conversation back to before turn N. Exit 1: a conflict
    (nothing was written) or a file that could not be restored."""
    from agentcli.cli.commands import session_commands

    _guarded(lambda: session_commands.rewind(session_id, to, files=files, chat=chat, force=force))


policy_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, **_command_info("policy", SUMMARIES["policy"])
)
app.add_typer(policy_app, name="policy")
tools_app = typer.Typer(
    invoke_without_command=True,  # `agentcli tools` alone lists them, as `tools list` does
    rich_markup_mode=None,
    **_command_info("tools", SUMMARIES["tools"]),
)
app.add_typer(tools_app, name="tools")


@tools_app.callback()
def tools_alone(
    context: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    cwd: Workspace = None,
) -> None:
    if context.invoked_subcommand is None:
        tools_list(as_json, cwd)


def _explain(values: dict[str, Any]) -> int:
    from agentcli.cli.commands import policy_commands

    return policy_commands.explain_main(values)


policy_app.command(
    "explain",
    **_command_info(
        "policy explain",
        "What the policy would decide for a call, and why, without running anything.",
    ),
)(
    _command(
        "policy explain",
        _explain,
        [
            _argument("tool", "The tool, e.g. run_shell or write_file."),
            _argument("args", "run_shell: the command; other tools: a JSON object of arguments."),
        ],
    )
)


@app.command(**_command_info("doctor"))
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    add_dir: Annotated[
        list[str] | None,
        typer.Option(
            "--add-dir", help="Show the reach with this place added (repeatable).", metavar="DIR"
        ),
    ] = None,
    cwd: Workspace = None,
) -> None:
    """What protects the commands the model runs: the sandbox in force, its profiles, and
    what every tool may reach."""
    from agentcli.cli.commands import doctor as doctor_command

    _guarded(lambda: doctor_command.run(_workspace(cwd), as_json=as_json, add_dirs=add_dir or []))


@tools_app.command("list", **_command_info("tools list"))
def tools_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    cwd: Workspace = None,
) -> None:
    """Every tool with its risk and where it comes from."""
    from agentcli.cli.commands import policy_commands

    _guarded(lambda: policy_commands.list_tools(_workspace(cwd), as_json))


mcp_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, **_command_info("mcp", SUMMARIES["mcp"])
)
app.add_typer(mcp_app, name="mcp")
Project = Annotated[
    bool, typer.Option("--project", help="The project's file, not the user's configuration.")
]


@mcp_app.command("add", **_command_info("mcp add"))
def mcp_add(
    name: Annotated[
        str, typer.Argument(help="The server's name (tools: mcp__NAME__TOOL).", metavar="NAME")
    ],
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="After --: the command that starts a stdio server, and its args.",
            metavar="COMMAND",
        ),
    ] = None,
    url: Annotated[
        str | None, typer.Option("--url", help="A server reached by HTTP.", metavar="URL")
    ] = None,
    transport: Annotated[
        str | None,
        typer.Option(
            "--transport",
            help="With --url: http (streamable) or sse (legacy) [default: http, falling back "
            "to sse for a legacy server].",
            metavar="TRANSPORT",
        ),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option("--env", help="Pass this variable to the server (repeatable).", metavar="VAR"),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            help="'Name: value' for HTTP; ${VAR} takes a variable (repeatable).",
            metavar="HEADER",
        ),
    ] = None,
    trusted: Annotated[
        bool, typer.Option("--trusted", help="Honour its tool annotations for risk.")
    ] = False,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            help="stdio: read-only, workspace-write, network or none [default: read-only].",
            metavar="PROFILE",
        ),
    ] = None,
    dirs: Annotated[
        list[str] | None,
        typer.Option(
            "--dir",
            help="stdio: a place it may also reach, DIR or DIR:ro (repeatable).",
            metavar="DIR",
        ),
    ] = None,
    project: Project = False,
    cwd: Workspace = None,
) -> None:
    """Add an MCP server: agentcli mcp add NAME -- COMMAND ARGS... or --url URL."""
    from agentcli.cli.commands import mcp_commands

    _guarded(
        lambda: mcp_commands.add(
            _workspace(cwd),
            name,
            command or [],
            url=url,
            env=env or [],
            headers=header or [],
            trusted=trusted,
            project=project,
            sandbox=sandbox,
            dirs=dirs or [],
            transport=transport,
        )
    )


@mcp_app.command("remove", **_command_info("mcp remove"))
def mcp_remove(
    name: Annotated[str, typer.Argument(help="The server's name.", metavar="NAME")],
    project: Project = False,
    cwd: Workspace = None,
) -> None:
    """Remove an MCP server from the configuration."""
    from agentcli.cli.commands import mcp_commands

    _guarded(lambda: mcp_commands.remove(_workspace(cwd), name, project))


@mcp_app.command("list", **_command_info("mcp list"))
def mcp_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    cwd: Workspace = None,
) -> None:
    """Start each server and show its state, tools, resources, prompts and errors."""
    from agentcli.cli.commands import mcp_commands

    _guarded(lambda: mcp_commands.list_servers(_workspace(cwd), as_json))


@mcp_app.command("login", **_command_info("mcp login"))
def mcp_login(
    name: Annotated[str, typer.Argument(help="The server's name.", metavar="NAME")],
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL only; open no browser.")
    ] = False,
    cwd: Workspace = None,
) -> None:
    """Log in to an MCP server reached by URL: prints the URL to open in a browser and
    stores the tokens the server's authorization server gives (OAuth, PKCE)."""
    from agentcli.cli.commands import mcp_commands

    _guarded(lambda: mcp_commands.login(_workspace(cwd), name, browser=not no_browser))


@mcp_app.command("logout", **_command_info("mcp logout"))
def mcp_logout(
    name: Annotated[str, typer.Argument(help="The server's name.", metavar="NAME")],
) -> None:
    """Delete the OAuth tokens stored for an MCP server."""
    from agentcli.cli.commands import mcp_commands

    _guarded(lambda: mcp_commands.logout(name))


def _mcp_serve(values: dict[str, Any]) -> int:  # _guarded exits with the code
    from agentcli.cli.commands.mcp_serve_command import mcp_serve_command
    from agentcli.cli.options import options_of

    flags = {o.name: values[o.name] for o in options_of("mcp serve") if o.to_settings}
    _guarded(
        lambda: mcp_serve_command(
            flags,
            http=values["http"],
            token_env=values["token_env"],
            configured=values["with_configured"],
        )
    )
    return 0


mcp_app.command(
    "serve",
    **_command_info(
        "mcp serve",
        "Lend agentcli's tools to another agent over MCP (stdio, or --http on loopback), "
        "under agentcli's policy, boundary and sandbox.",
    ),
)(_command("mcp serve", _mcp_serve, []))


@app.command(**_command_info("plugins"))
def plugins(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The installed plug-ins (Python entry points) and the tools they register."""
    from agentcli.cli.commands import plugin_commands

    _guarded(lambda: plugin_commands.list_plugins(as_json))


@app.command(**_command_info("models"))
def models(
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="Ask only this OpenAI-compatible server (URL/v1).", metavar="URL"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The models the configured providers offer."""
    from agentcli.cli.commands import models_command

    _guarded(lambda: models_command.list_models(_workspace(None), base_url, as_json))


@app.command(**_command_info("trust"))
def trust(
    directory: Annotated[
        str | None,
        typer.Argument(help="The workspace [default: .]", show_default=False, metavar="PATH"),
    ] = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting it.")] = False,
    listing: Annotated[bool, typer.Option("--list", help="List trusted workspaces.")] = False,
) -> None:
    """Trust a workspace: its .agentcli/config.toml may then loosen the policy."""
    from agentcli.cli.commands import config_commands

    _guarded(lambda: config_commands.trust_workspace(_workspace(directory), revoke, listing))


@app.command(**_command_info("completions"))
def completions(
    shell: Annotated[
        str, typer.Argument(help="bash, zsh or fish.", show_default=False, metavar="SHELL")
    ],
) -> None:
    """Print the shell completion script (also shipped in the repository's completions/)."""
    from agentcli.cli.completion_scripts import SHELLS, render

    if shell not in SHELLS:
        from agentcli.cli.one_shot import print_error

        print_error(f"no completion script for {shell!r}; choose one of: {', '.join(SHELLS)}")
        raise typer.Exit(2)
    sys.stdout.write(render(typer.main.get_command(app), shell))


def run_app(argv: list[str] | None = None, *, debug: bool = False) -> int:
    """Runs the Typer app with usage errors reduced to one line and a documented code;
    `debug`: a command without --debug of its own was given one (a bug's traceback)."""
    from agentcli.adapters.typer_errors import click_exceptions

    click_errors = click_exceptions()

    try:
        result = app(args=argv, prog_name="agentcli", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as error:
        sys.stdout.write(error.ctx.get_help() + "\n")
        return 0
    except click_errors.UsageError as error:
        where = error.ctx.command_path if error.ctx else "agentcli"
        message = _plain_bad_value(error) or error.format_message()
        sys.stderr.write(f"agentcli: error: {message} (see '{where} --help')\n")
        return 2
    except click_errors.ClickException as error:
        sys.stderr.write(f"agentcli: error: {error.format_message()}\n")
        return error.exit_code
    except typer.Abort:
        sys.stderr.write("agentcli: interrupted\n")
        return 130
    except KeyboardInterrupt:
        sys.stderr.write("agentcli: interrupted\n")
        return 130
    except Exception as bug:  # the last net: one line, never a traceback unless asked
        from agentcli.errors import internal_error

        said = argv if argv is not None else sys.argv
        return internal_error(bug, [*said, "--debug"] if debug else said)
    return result if isinstance(result, int) else 0


# What a value should have been, by the metavar of its option (else by its type).
EXPECTED = {"SECONDS": "a number of seconds", "N": "a whole number", "PORT": "a port number"}
EXPECTED_BY_ERROR = {
    "int_parsing": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false",
}


def _plain_bad_value(error: Exception) -> str | None:
    """`--timeout: 'abc' is not a number of seconds` for a value Typer could not convert,
    instead of the converter's (pydantic's) own words; None for any other usage error."""
    param = getattr(error, "param", None)
    problems = getattr(error.__cause__, "errors", None)
    if param is None or not callable(problems):
        return None
    first = problems()[0]
    expected = EXPECTED.get(param.metavar or "") or EXPECTED_BY_ERROR.get(first.get("type"))
    if expected is None:
        return None
    name = max(param.opts, key=len) if param.opts else param.name
    return f"{name}: {first.get('input')!r} is not {expected}"


def render_top_help() -> str:
    """The top-level help as `agentcli --help` prints it."""
    command = typer.main.get_command(app)
    with command.make_context(
        "agentcli", [], resilient_parsing=True, terminal_width=80
    ) as ctx:  # the same everywhere, so that it can be cached
        return command.get_help(ctx) + "\n"


def _formatted_literal(line: str) -> str:
    """A string literal in the formatter's quote style: double quotes, unless single quotes
    need fewer escapes (JSON's escapes are valid Python)."""
    import json

    literal = json.dumps(line, ensure_ascii=False)
    if line.count('"') > line.count("'"):
        inner = literal[1:-1].replace('\\"', '"').replace("'", "\\'")
        return f"'{inner}'"
    return literal


def write_help_cache() -> None:
    """Regenerates agentcli/cli/cached_help.py (a test fails when it is stale)."""
    from pathlib import Path

    target = Path(__file__).with_name("cached_help.py")
    text = render_top_help().splitlines(keepends=True)
    lines = "".join(f"    {_formatted_literal(line)}\n" for line in text)
    target.write_text(
        '"""Generated by agentcli.cli.app.write_help_cache(): the top-level help, printed without '
        'importing\nthe CLI framework so that `agentcli --help` starts fast. Do not edit."""\n\n'
        f"TOP_LEVEL_HELP = (\n{lines})\n"
    )
