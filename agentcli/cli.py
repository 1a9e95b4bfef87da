"""The command line: parse, wire, exit. Everything heavy is imported inside the commands,
so `--help` stays fast."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from agentcli import __version__

app = typer.Typer(
    name="agentcli",
    help="A command-line agent shell: a model answers, calling tools under a risk policy.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    no_args_is_help=True,
    # A fixed width keeps help identical everywhere, so the top-level help can be cached.
    context_settings={"help_option_names": ["-h", "--help"], "terminal_width": 80},
)

Model = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="PROVIDER:MODEL, e.g. openai:gpt-4.1-mini [env AGENTCLI_MODEL]"
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", help="OpenAI-compatible server URL [env OPENAI_BASE_URL]"),
]
System = Annotated[str | None, typer.Option("--system", help="Extra system instructions.")]
MaxSteps = Annotated[
    int | None,
    typer.Option(
        "--max-steps", help="Most model steps in one run [default: 20]", show_default=False
    ),
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", help="Wall-clock limit for the whole run, in seconds.")
]
Cwd = Annotated[
    str | None,
    typer.Option("--cwd", help="Workspace root that tools are confined to [default: .]"),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call that would ask.")]
Deny = Annotated[bool, typer.Option("--deny", help="Deny every tool call that would ask.")]
Allow = Annotated[
    list[str] | None,
    typer.Option("--allow", help="Allow calls matching RULE, e.g. 'run_shell(npm test *)'."),
]
Forbid = Annotated[
    list[str] | None, typer.Option("--forbid", help="Deny calls matching RULE (beats --yes).")
]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]
Continue = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the latest session of this workspace.")
]
Resume = Annotated[str | None, typer.Option("--resume", help="Continue the session with this id.")]


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
    """A command-line agent shell: a model answers, calling tools under a risk policy."""


def _one_shot(
    prompt: str | None, output: str, continue_: bool, resume: str | None, **flags: object
) -> int:
    from agentcli.errors import AgentCliError
    from agentcli.prompt_input import build_prompt, read_stdin
    from agentcli.runner import open_session, print_error, run_in_event_loop
    from agentcli.settings import resolve_settings

    try:
        settings = resolve_settings(output=output, **flags)  # type: ignore[arg-type]
        text = build_prompt(prompt, read_stdin(prompt_expected=prompt in (None, "-")))
        session = open_session(settings, resume=resume, continue_=continue_)
    except AgentCliError as error:
        print_error(str(error))
        return error.exit_code
    return run_in_event_loop(settings, text, session)


def _interactive(continue_: bool, resume: str | None, flags: dict) -> int:
    from agentcli.errors import AgentCliError
    from agentcli.runner import open_session, print_error, startup_notices
    from agentcli.settings import resolve_settings

    try:
        settings = resolve_settings(output="text", **flags)
        if settings.config.ignored:
            from agentcli.ui.trust_prompt import offer_trust

            if offer_trust(settings):
                settings = resolve_settings(output="text", **flags)
        session = open_session(settings, resume=resume, continue_=continue_)
    except AgentCliError as error:
        print_error(str(error))
        return error.exit_code
    startup_notices(settings, session)
    from agentcli.ui.repl import run_repl

    return run_repl(settings, session)


@app.command()
def run(
    prompt: Annotated[
        str | None,
        typer.Argument(
            help="The instruction. `-` or none: read it from stdin.", show_default=False
        ),
    ] = None,
    model: Model = None,
    base_url: BaseUrl = None,
    system: System = None,
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    cwd: Cwd = None,
    output: Annotated[
        str, typer.Option("--output", "-o", help="text, json or jsonl (AG-UI events).")
    ] = "text",
    yes: Yes = False,
    deny: Deny = False,
    allow: Allow = None,
    forbid: Forbid = None,
    continue_: Continue = False,
    resume: Resume = None,
    debug: Debug = False,
) -> None:
    """Run one prompt to the end and exit. Piped stdin is the prompt, or context below it."""
    code = _one_shot(
        prompt,
        output,
        continue_,
        resume,
        model=model,
        base_url=base_url,
        system=system,
        max_steps=max_steps,
        timeout=timeout,
        cwd=cwd,
        yes=yes,
        deny=deny,
        allow=allow,
        forbid=forbid,
        debug=debug,
    )
    raise typer.Exit(code)


@app.command()
def chat(
    model: Model = None,
    base_url: BaseUrl = None,
    system: System = None,
    max_steps: MaxSteps = None,
    timeout: Timeout = None,
    cwd: Cwd = None,
    yes: Yes = False,
    deny: Deny = False,
    allow: Allow = None,
    forbid: Forbid = None,
    continue_: Continue = False,
    resume: Resume = None,
    debug: Debug = False,
) -> None:
    """Chat with the model in a REPL. With stdin not a terminal, runs stdin as one prompt."""
    if sys.stdin is not None and sys.stdin.isatty():
        flags = {"model": model, "base_url": base_url, "system": system, "max_steps": max_steps,
                 "timeout": timeout, "cwd": cwd, "yes": yes, "deny": deny, "allow": allow,
                 "forbid": forbid, "debug": debug}  # fmt: skip
        raise typer.Exit(_interactive(continue_, resume, flags))
    code = _one_shot(
        None,
        "text",
        continue_,
        resume,
        model=model,
        base_url=base_url,
        system=system,
        max_steps=max_steps,
        timeout=timeout,
        cwd=cwd,
        yes=yes,
        deny=deny,
        allow=allow,
        forbid=forbid,
        debug=debug,
    )
    raise typer.Exit(code)


config_app = typer.Typer(
    help="Show and change the configuration.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(config_app, name="config")
Workspace = Annotated[str | None, typer.Option("--cwd", help="The workspace [default: .]")]


def _guarded(action) -> None:  # type: ignore[no-untyped-def]
    """Runs a command's action; a user-facing error is one line and its exit code."""
    from agentcli.errors import AgentCliError
    from agentcli.runner import print_error

    try:
        code = action()
    except AgentCliError as error:
        print_error(str(error))
        raise typer.Exit(error.exit_code) from None
    raise typer.Exit(code)


def _workspace(cwd: str | None):  # type: ignore[no-untyped-def]
    from pathlib import Path

    from agentcli.errors import UsageError

    path = Path(cwd or ".").expanduser().resolve()
    if not path.is_dir():
        raise UsageError(f"--cwd {str(path)!r} is not a directory")
    return path


@config_app.command("show")
def config_show(
    cwd: Workspace = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The effective settings, each with where it came from."""
    from agentcli.commands import config_commands

    _guarded(lambda: config_commands.show(_workspace(cwd), as_json))


@config_app.command("path")
def config_path(cwd: Workspace = None) -> None:
    """Where the user and project configuration files are."""
    from agentcli.commands import config_commands

    _guarded(lambda: config_commands.paths(_workspace(cwd)))


@config_app.command("set")
def config_set(
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. model or policy.allow.")],
    value: Annotated[str, typer.Argument(help='A TOML value (5, true, ["a"]) or a string.')],
    project: Annotated[
        bool, typer.Option("--project", help="Write the project file, not the user file.")
    ] = False,
    cwd: Workspace = None,
) -> None:
    """Set one key in the user configuration file (or the project's, with --project)."""
    from agentcli.commands import config_commands

    _guarded(lambda: config_commands.set_key(_workspace(cwd), key, value, project))


sessions_app = typer.Typer(
    help="List, show, export and remove sessions.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(sessions_app, name="sessions")
SessionId = Annotated[str, typer.Argument(help="Session id, or a unique prefix of it.")]


@sessions_app.command("list")
def sessions_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every session: id, start time, turns, tokens, workspace and first prompt."""
    from agentcli.commands import session_commands

    _guarded(lambda: session_commands.list_sessions(as_json))


@sessions_app.command("show")
def sessions_show(session_id: SessionId) -> None:
    """A session's transcript, readable."""
    from agentcli.commands import session_commands

    _guarded(lambda: session_commands.show(session_id))


@sessions_app.command("export")
def sessions_export(
    session_id: SessionId,
    fmt: Annotated[str, typer.Option("--format", help="json or markdown.")] = "json",
) -> None:
    """A session as JSON (header, messages, events) or Markdown."""
    from agentcli.commands import session_commands

    _guarded(lambda: session_commands.export(session_id, fmt))


@sessions_app.command("rm")
def sessions_rm(session_id: SessionId) -> None:
    """Remove a session file."""
    from agentcli.commands import session_commands

    _guarded(lambda: session_commands.remove(session_id))


policy_app = typer.Typer(help="Explain what the policy decides.", no_args_is_help=True,
                         rich_markup_mode=None)  # fmt: skip
app.add_typer(policy_app, name="policy")
tools_app = typer.Typer(help="The tools the model can call.", no_args_is_help=True,
                        rich_markup_mode=None)  # fmt: skip
app.add_typer(tools_app, name="tools")


@policy_app.command("explain")
def policy_explain(
    tool: Annotated[str, typer.Argument(help="The tool, e.g. run_shell or write_file.")],
    args: Annotated[
        str | None,
        typer.Argument(help="run_shell: the command; other tools: a JSON object of arguments."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    yes: Yes = False,
    deny: Deny = False,
    allow: Allow = None,
    forbid: Forbid = None,
    cwd: Workspace = None,
) -> None:
    """What the policy would decide for a call, and why, without running anything."""
    from agentcli.commands import policy_commands

    _guarded(
        lambda: policy_commands.explain(
            _workspace(cwd),
            tool,
            args,
            as_json=as_json,
            yes=yes,
            deny=deny,
            allow=allow or [],
            forbid=forbid or [],
        )
    )


@tools_app.command("list")
def tools_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    cwd: Workspace = None,
) -> None:
    """Every tool with its risk and where it comes from."""
    from agentcli.commands import policy_commands

    _guarded(lambda: policy_commands.list_tools(_workspace(cwd), as_json))


mcp_app = typer.Typer(help="MCP servers: add, remove, list.", no_args_is_help=True,
                      rich_markup_mode=None)  # fmt: skip
app.add_typer(mcp_app, name="mcp")
Project = Annotated[
    bool, typer.Option("--project", help="The project's file, not the user's configuration.")
]


@mcp_app.command("add")
def mcp_add(
    name: Annotated[str, typer.Argument(help="The server's name (tools: mcp__NAME__TOOL).")],
    command: Annotated[
        list[str] | None,
        typer.Argument(help="After --: the command that starts a stdio server, and its args."),
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="A streamable HTTP server.")] = None,
    env: Annotated[
        list[str] | None, typer.Option("--env", help="Pass this variable to the server (a name).")
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", help="'Name: value' for HTTP; ${VAR} takes a variable."),
    ] = None,
    trusted: Annotated[
        bool, typer.Option("--trusted", help="Honour its tool annotations for risk.")
    ] = False,
    project: Project = False,
    cwd: Workspace = None,
) -> None:
    """Add an MCP server: agentcli mcp add NAME -- COMMAND ARGS... or --url URL."""
    from agentcli.commands import mcp_commands

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
        )
    )


@mcp_app.command("remove")
def mcp_remove(
    name: Annotated[str, typer.Argument(help="The server's name.")],
    project: Project = False,
    cwd: Workspace = None,
) -> None:
    """Remove an MCP server from the configuration."""
    from agentcli.commands import mcp_commands

    _guarded(lambda: mcp_commands.remove(_workspace(cwd), name, project))


@mcp_app.command("list")
def mcp_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    cwd: Workspace = None,
) -> None:
    """Start each server and show its state, tools, resources, prompts and errors."""
    from agentcli.commands import mcp_commands

    _guarded(lambda: mcp_commands.list_servers(_workspace(cwd), as_json))


@app.command()
def plugins(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The installed plug-ins (Python entry points) and the tools they register."""
    from agentcli.commands import plugin_commands

    _guarded(lambda: plugin_commands.list_plugins(as_json))


@app.command()
def trust(
    directory: Annotated[
        str | None, typer.Argument(help="The workspace [default: .]", show_default=False)
    ] = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting it.")] = False,
    listing: Annotated[bool, typer.Option("--list", help="List trusted workspaces.")] = False,
) -> None:
    """Trust a workspace: its .agentcli/config.toml may then loosen the policy."""
    from agentcli.commands import config_commands

    _guarded(lambda: config_commands.trust_workspace(_workspace(directory), revoke, listing))


@app.command()
def completions(
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish.", show_default=False)],
) -> None:
    """Print the shell completion script (also shipped in the repository's completions/)."""
    from agentcli.completion_scripts import SHELLS, render

    if shell not in SHELLS:
        from agentcli.runner import print_error

        print_error(f"no completion script for {shell!r}; choose one of: {', '.join(SHELLS)}")
        raise typer.Exit(2)
    sys.stdout.write(render(typer.main.get_command(app), shell))


def run_app(argv: list[str] | None = None) -> int:
    """Runs the Typer app with usage errors reduced to one line and a documented code."""
    try:
        from typer._click import exceptions as click_errors
    except ImportError:  # typer versions that use the click package itself
        import click.exceptions as click_errors  # type: ignore[no-redef]

    try:
        result = app(args=argv, prog_name="agentcli", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as error:
        sys.stdout.write(error.ctx.get_help() + "\n")
        return 0
    except click_errors.UsageError as error:
        where = error.ctx.command_path if error.ctx else "agentcli"
        sys.stderr.write(f"agentcli: error: {error.format_message()} (see '{where} --help')\n")
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
        if "--debug" in (argv if argv is not None else sys.argv):
            raise
        sys.stderr.write(
            f"agentcli: error: internal error: {type(bug).__name__}: {bug} "
            "(rerun with --debug for the traceback)\n"
        )
        return 1
    return result if isinstance(result, int) else 0


def render_top_help() -> str:
    """The top-level help as `agentcli --help` prints it."""
    command = typer.main.get_command(app)
    with command.make_context("agentcli", [], resilient_parsing=True) as ctx:
        return command.get_help(ctx) + "\n"


def write_help_cache() -> None:
    """Regenerates agentcli/_help_text.py (a test fails when it is stale)."""
    from pathlib import Path

    target = Path(__file__).with_name("_help_text.py")
    import json

    # JSON string literals are valid Python and already in the formatter's quote style.
    text = render_top_help().splitlines(keepends=True)
    lines = "".join(f"    {json.dumps(line, ensure_ascii=False)}\n" for line in text)
    target.write_text(
        '"""Generated by agentcli.cli.write_help_cache(): the top-level help, printed without '
        'importing\nthe CLI framework so that `agentcli --help` starts fast. Do not edit."""\n\n'
        f"TOP_LEVEL_HELP = (\n{lines})\n"
    )
