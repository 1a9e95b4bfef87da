"""The REPL's slash commands, each with a one-line help."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.errors import UsageError
from agentcli.output.visible import one_line
from agentcli.sessions.session import Session, find_session
from agentcli.text.words import plural

if TYPE_CHECKING:
    from agentcli.ui.host import ReplHost

COMMANDS = {
    "help": "list the commands",
    "exit": "leave (also Ctrl-D)",
    "clear": "start a new conversation",
    "model": "pick a model the providers list, or switch: /model PROVIDER:MODEL",
    "tools": "the tools, with their risk and source",
    "policy": "rules and this session's remembered choices; /policy revoke N",
    "usage": "tokens in and out in this session",
    "sessions": "the saved sessions",
    "resume": "continue a saved session: /resume picks one, /resume ID",
    "compact": "summarise the older turns now",
    "context": "what fills the context window, and when compaction comes",
    "status": "model, workspace, places, approvals, sandbox, context, session",
    "diff": "what this session changed in the workspace",
    "expand": "show a folded approval or read-only step in full: /expand N (Ctrl-O: the last)",
    "rewind": "take the files, the conversation or both back to before a turn",
    "init": "write an AGENTS.md skeleton from the workspace (asks first)",
    "approvals": "the approval mode; switch: /approvals ask|yes|deny (Shift+Tab)",
    "skills": "the skills the model may use, where each came from, what was skipped",
    "agents": "the subagents the model may hand tasks to, where each came from, skipped ones",
    "hooks": "the hooks run on this session's events, where each came from",
    "add-dir": "let every tool reach one more directory: /add-dir DIR[:ro]",
    "mcp": "the MCP servers; /mcp login NAME logs in to one and starts its tools",
}


class SlashCommands:
    def __init__(self, repl: ReplHost) -> None:
        self.repl = repl

    async def run(self, text: str) -> None:
        name, _, argument = text[1:].partition(" ")
        argument = argument.strip()
        if name.startswith("mcp__"):
            await self._mcp_prompt(name, argument)
            return
        if name not in COMMANDS:
            from agentcli.ui.habits import run_custom

            if not await run_custom(self.repl, name, argument):
                self.repl.say(f"unknown command /{one_line(name)}{self._close_to(name)}")
            return
        await getattr(self, f"cmd_{name.replace('-', '_')}")(argument)

    def _close_to(self, name: str) -> str:
        """`; did you mean /model?` for a slip of a known name, else `; /help lists them`."""
        from difflib import get_close_matches

        known = [*COMMANDS, *self.repl.commands.found]
        close = get_close_matches(name, known, n=1, cutoff=0.75)
        return f"; did you mean /{close[0]}?" if close else "; /help lists them"

    async def _mcp_prompt(self, name: str, argument: str) -> None:
        from agentcli.ui import mcp_prompts

        registry = self.repl.agent.registry
        found = mcp_prompts.prompt_commands(registry).get(name)
        if found is None and registry.starting and mcp_prompts.server_of(name, registry):
            self.repl.say(f"  (waiting for MCP server {mcp_prompts.server_of(name, registry)}…)")
            await registry.started()
            found = mcp_prompts.prompt_commands(registry).get(name)
        if found is None:
            self.repl.say(f"no MCP prompt /{one_line(name)}; /help lists them")
            return
        source, prompt = found
        try:
            text = await mcp_prompts.render(source, prompt, argument)
        except UsageError:
            raise  # the user's arguments: said as they are
        except Exception as error:  # the server's failure, said in one line
            raise UsageError(f"/{name}: {error}") from None
        await self.repl.turn(text)

    async def cmd_help(self, argument: str) -> None:
        for name, help_text in COMMANDS.items():
            self.repl.say(f"  /{name:<9} {help_text}")
        from agentcli.ui.mcp_prompts import describe, prompt_commands

        for name, (_, prompt) in prompt_commands(self.repl.agent.registry).items():
            self.repl.say(f"  /{one_line(name)}  {one_line(describe(prompt))}")  # the server's
        from agentcli.ui.habits import help_lines

        for line in help_lines(self.repl.commands):
            self._say_wrapped(line)
        self.repl.say("  @path attaches a file · !cmd runs a command yourself · Alt+Enter: newline")

    async def cmd_exit(self, argument: str) -> None:
        self.repl.done = True

    async def cmd_clear(self, argument: str) -> None:
        settings = self.repl.settings
        await self.repl.switch_session(
            Session.create(settings.workspace, str(self.repl.agent.model))
        )
        self.repl.say(f"new conversation (session {self.repl.agent.session.id})")

    async def cmd_model(self, argument: str) -> None:
        if not argument:
            from agentcli.ui.model_picker import choose_model

            argument = await choose_model(self.repl.settings, self.repl.say) or ""
            if not argument:
                return
            if argument == str(self.repl.agent.model):
                self.repl.say(f"model: {argument} (already in use)")
                return
        from agentcli.assembly import with_model
        from agentcli.assembly.session import switch_model

        settings = with_model(self.repl.settings, argument)
        await switch_model(self.repl.agent, settings)
        self.repl.settings = settings
        self.repl.say(f"model: {settings.model}")

    async def cmd_tools(self, argument: str) -> None:
        for tool in sorted(self.repl.agent.registry, key=lambda t: t.name):
            name, source = one_line(tool.name), one_line(tool.source)
            self.repl.say(f"  {name:<17} {source:<8} {tool.risk_summary}")

    async def cmd_policy(self, argument: str) -> None:
        policy = self.repl.agent.policy
        if argument.startswith("revoke"):
            number = argument.removeprefix("revoke").strip()
            remembered = [*policy.session_allow, *policy.session_deny]
            if not number.isdigit() or not 1 <= int(number) <= len(remembered):
                raise UsageError("give the number of a remembered choice: /policy revoke N")
            rule = remembered[int(number) - 1]
            for rules in (policy.session_allow, policy.session_deny):
                if rule in rules:
                    rules.remove(rule)
            self.repl.say(f"revoked {one_line(rule.text)}")
            return
        for label, rules in (
            ("allow", policy.rules.allow),
            ("ask", policy.rules.ask),
            ("deny", policy.rules.deny),
        ):
            for rule in rules:
                self.repl.say(f"  {label:<5} {one_line(rule.text)}  ({one_line(rule.source)})")
        remembered = [("allow", r) for r in policy.session_allow] + [
            ("deny", r) for r in policy.session_deny
        ]
        if not remembered and not any((policy.rules.allow, policy.rules.ask, policy.rules.deny)):
            self.repl.say("  no rules; nothing remembered in this session yet")
        for number, (label, rule) in enumerate(remembered, start=1):
            self.repl.say(f"  [{number}] this session: {label} {one_line(rule.text)}")
        flags = [f for f, on in (("--yes", policy.yes), ("--deny", policy.deny)) if on]
        if flags:
            self.repl.say(f"  flags: {' '.join(flags)}")

    async def cmd_usage(self, argument: str) -> None:
        usage = self.repl.agent.usage
        self.repl.say(
            f"  this session: {usage.input_tokens:,} tokens in, {usage.output_tokens:,} out, "
            f"{usage.total_tokens:,} in all"
        )

    async def cmd_sessions(self, argument: str) -> None:
        from agentcli.sessions.listing import all_summaries, summaries_table

        self.repl.out.write(summaries_table(all_summaries()[:20]))

    async def cmd_resume(self, argument: str) -> None:
        if not argument:
            argument = await self._pick_session() or ""
            if not argument:
                return
        path = find_session(argument)
        if path == self.repl.agent.session.path:
            self.repl.say(f"already in session {path.stem}")
            return
        wait = self.repl.settings.config.get("sessions.lock_wait")
        limit = self.repl.settings.config.get("images.max_bytes")
        session = Session.open(path, lock_wait=wait, images=limit)
        for warning in session.warnings:
            self.repl.say(f"warning: {one_line(warning)}")
        await self.repl.switch_session(session)
        self.repl.say(f"resumed session {session.id} ({plural(self.repl.turns(), 'turn')})")
        self.repl.show_conversation()

    async def cmd_context(self, argument: str) -> None:
        from agentcli.ui.context_meter import details, measure

        for line in details(measure(self.repl.agent)):
            self._say_wrapped(f"  {line}")

    async def cmd_status(self, argument: str) -> None:
        from agentcli.ui.status import status_lines

        for line in status_lines(self.repl.agent):
            self._say_wrapped(f"  {line}", hang=13)  # under the value, past `  workspace  `

    def _say_wrapped(self, line: str, hang: int | None = None) -> None:
        """A fact a line, wrapped between words at the terminal's width (at 40 columns a
        word cut in two reads as two words)."""
        import shutil
        import textwrap

        width = shutil.get_terminal_size((80, 24)).columns - 1
        indent = " " * (hang if hang is not None else len(line) - len(line.lstrip()) + 2)
        wrapped = textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
            drop_whitespace=True,
        )
        for part in wrapped or [line]:
            self.repl.say(part)

    async def _pick_session(self) -> str | None:
        """`/resume` alone: the saved sessions, latest first, to choose from."""
        import time

        from agentcli.sessions.listing import age, recent_sessions
        from agentcli.ui.picker import pick

        recent = recent_sessions(exclude=self.repl.agent.session.id)
        if not recent:
            self.repl.say("no other saved session to resume; /sessions lists them all")
            return None
        now = time.time()
        rows = [
            (
                one_line(r.summary.first_prompt) or "(no prompt)",
                f"{one_line(r.summary.model)} · {age(now - r.modified)}",
            )
            for r in recent
        ]
        index = await pick("Resume which session?", rows)
        if index is None:
            self.repl.say("(cancelled)")
            return None
        return recent[index].summary.id

    async def cmd_diff(self, argument: str) -> None:
        from agentcli.ui.diff_view import show_diff

        await show_diff(self.repl)

    async def cmd_expand(self, argument: str) -> None:
        self.repl.expand(argument)

    async def cmd_rewind(self, argument: str) -> None:
        from agentcli.ui.rewind_view import rewind_command

        await rewind_command(self.repl)

    async def cmd_init(self, argument: str) -> None:
        from agentcli.ui.init_command import run_init

        await run_init(self.repl)

    async def cmd_approvals(self, argument: str) -> None:
        from agentcli.ui.approval_mode import approvals_command

        self.repl.say(approvals_command(self.repl, argument))

    async def cmd_skills(self, argument: str) -> None:
        import shutil

        from agentcli.ui.habits import skills_lines

        width = shutil.get_terminal_size((80, 24)).columns - 1
        for line in skills_lines(self.repl.skills, width):
            self._say_wrapped(line)

    async def cmd_agents(self, argument: str) -> None:
        import shutil

        from agentcli.tools.task import NAME
        from agentcli.ui.habits import agents_lines

        width = shutil.get_terminal_size((80, 24)).columns - 1
        for line in agents_lines(self.repl.agent.registry.get(NAME), width):
            self._say_wrapped(line)

    async def cmd_hooks(self, argument: str) -> None:
        from agentcli.ui.habits import hooks_lines

        for line in hooks_lines(self.repl.hooks):
            self._say_wrapped(line)

    async def cmd_add_dir(self, argument: str) -> None:
        from agentcli.assembly.places import add_place

        self._say_wrapped(await add_place(self.repl.agent, argument))

    async def cmd_mcp(self, argument: str) -> None:
        from agentcli.ui.mcp_login import mcp_command

        await mcp_command(self.repl, argument)

    async def cmd_compact(self, argument: str) -> None:
        compactor = self.repl.agent.loop.compactor
        conversation = self.repl.agent.session.conversation
        if compactor is None or not await compactor.compact(conversation):
            self.repl.say("  nothing to compact yet")
