"""`agentcli chat` on a terminal: a prompt-toolkit REPL around the agent.

Input: persistent history, Ctrl-R search, Emacs keys (vi as an option), Alt+Enter or Esc
then Enter for a newline, bracketed paste kept as one message, a bottom toolbar, slash
commands with completion, `@path` to attach a file, `!command` to run one yourself.
Ctrl-O at the prompt shows the last folded approval or read-only step again (/expand N any).
Interrupts: Ctrl-C or Esc during a turn cancels it; Ctrl-C on an empty prompt says how to
leave, and a second one within two seconds, Ctrl-D or /exit leaves with 0."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import create_app_session
from prompt_toolkit.completion import Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.output.plain_text import PlainTextOutput

from agentcli import __version__, records
from agentcli.agent.narrowed_tools import NarrowedTools
from agentcli.agent.session import Agent
from agentcli.assembly.session import long_lived_tools, open_agent
from agentcli.errors import AgentCliError, ExitCode
from agentcli.output import terminal
from agentcli.output.visible import one_line, visible
from agentcli.paths import data_dir
from agentcli.sessions.session import Session
from agentcli.settings import RunSettings
from agentcli.signals import ending_signals
from agentcli.text.words import plural
from agentcli.ui.approval import TerminalApprover
from agentcli.ui.approval_mode import (
    Mode,
    bind_cycle_key,
    mode_segment,
    sandbox_segment,
    set_mode,
)
from agentcli.ui.folds import FoldedItems
from agentcli.ui.habits import load_commands, skill_completions
from agentcli.ui.keys import EscWatcher
from agentcli.ui.mentions import path_completions
from agentcli.ui.render import ReplRenderer
from agentcli.ui.resource_mentions import expand_chat_mentions, resource_completions
from agentcli.ui.screen import TerminalGate
from agentcli.ui.slash import COMMANDS, SlashCommands

EXIT_WINDOW_SECONDS = 2.0
ADD_DIR = "/add-dir "
_DIRECTORIES = PathCompleter(only_directories=True, expanduser=True)  # for /add-dir


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # what a completion may not put in a line


class ChatCompleter(Completer):
    """Slash commands at the start of the line; workspace paths after `@`; directories
    after `/add-dir`."""

    def __init__(self, repl: Repl) -> None:
        self.repl = repl

    def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith(ADD_DIR):  # a directory, as --add-dir takes it
            argument = Document(before[len(ADD_DIR) :].lstrip())
            yield from _DIRECTORIES.get_completions(argument, complete_event)
            return
        if before.startswith("/") and " " not in before:
            for name, help_text in self._commands().items():
                if name.startswith(before[1:]):
                    yield Completion(f"/{name}", -len(before), display_meta=help_text)
            return
        words = before.split()
        word = words[-1] if words and not before.endswith(" ") else ""
        if word.startswith("$"):
            for completion, meta in skill_completions(word, self.repl.skills):
                yield Completion(completion, -len(word), display_meta=meta)
            return
        if word.startswith("@"):
            workspace = self.repl.agent.workspace
            shell = before.lstrip().startswith("!")  # a `!` line is run by bash as written
            for completion, display in path_completions(word[1:], workspace):
                if _CONTROL.search(completion):
                    continue  # a name with a newline would end the line it is put in
                if shell:
                    completion = shlex.quote(completion)  # `$(…)` in a name stays a name
                yield Completion("@" + completion, -len(word), display=display)
            for completion, display in resource_completions(word[1:], self.repl.registry):
                yield Completion("@" + completion, -len(word), display=display)

    def _commands(self) -> dict[str, str]:
        """The slash commands, the custom ones, and the prompts of the MCP servers that
        have started."""
        commands = dict(COMMANDS)
        for name, command in self.repl.commands.found.items():
            commands[name] = one_line(command.describe())
        if any(source.kind == "mcp" for source in self.repl.agent.registry.sources):
            from agentcli.ui.mcp_prompts import describe, prompt_commands

            for name, (_, prompt) in prompt_commands(self.repl.agent.registry).items():
                commands[name] = describe(prompt)
        return commands


class _History(FileHistory):
    """Prompt history that a read-only or full data directory does not break."""

    def store_string(self, string: str) -> None:
        with contextlib.suppress(OSError):
            super().store_string(string)


def _key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")  # Alt+Enter, or Esc then Enter
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


def _prompt_session(stream: Any, **options: Any) -> PromptSession[str]:
    """prompt-toolkit's session; on a dumb terminal its plain line prompt, with an output
    that writes no escape sequence (the default one still shows the cursor with one)."""
    if not terminal.dumb():
        return PromptSession(**options)
    with create_app_session(output=PlainTextOutput(stream)):
        return PromptSession(**options)


class Repl:
    def __init__(self, settings: RunSettings, session: Session) -> None:
        self.settings = settings
        self.out = sys.stdout
        self.screen = TerminalGate()  # the renderer's live lines wait while a prompt asks
        self.folds = FoldedItems()  # answered approvals and read-only steps, one line each
        self.renderer = ReplRenderer(self.out, self.screen, self.folds)
        self.keys = EscWatcher(on_escape=self._cancel_turn, on_line=self._queue)
        self.queued: list[str] = []  # lines typed during a turn: the next messages
        # The tools outlive each agent (/clear, /resume): MCP servers keep running, in one
        # sandbox for its MCP servers and commands alike.
        self.shared = long_lived_tools(settings)
        self.registry = self.shared.registry
        self.skills = self.shared.skills
        self.hooks = self.shared.hooks
        self.narrowing = NarrowedTools()  # a custom command's allowed-tools, in its turn
        self.shared.steps.append(self.narrowing)
        self.commands_reserved = frozenset(COMMANDS)
        self.commands = load_commands(settings, self.commands_reserved)
        self.agent = self._new_agent(session)
        self.pending_context: list[str] = []  # `!command` output for the next message
        self.slash = SlashCommands(self)
        self.prompt: PromptSession[str] = _prompt_session(
            self.out,
            history=_History(str(self._history_path())),
            completer=ChatCompleter(self),
            complete_while_typing=True,
            key_bindings=self._key_bindings(),
            bottom_toolbar=self._toolbar,
            vi_mode=bool(settings.config.get("repl.vi_mode")),
            enable_history_search=False,  # Ctrl-R stays the reverse search
        )
        self.renderer.idle_prompt = self.prompt  # news between turns is drawn above it
        self.done = False
        self.exit_code = ExitCode.OK
        self._command_task: asyncio.Task | None = None  # a `!command` in progress
        self._meter: tuple[Any, str] = (None, "")  # the context meter, and what it measured

    def _key_bindings(self) -> KeyBindings:
        bindings = _key_bindings()
        bind_cycle_key(bindings, self)

        @bindings.add("c-o")  # as in Claude Code: the last folded item, shown again
        def _expand_last(event: Any) -> None:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(lambda: self.expand(""))

        return bindings

    def expand(self, argument: str) -> None:
        """A folded item shown again in full, above the prompt (`/expand N`, Ctrl-O)."""
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        for line in self.folds.expand(argument, width):
            self.renderer.fitted(line)

    def set_approval_mode(self, mode: Mode) -> None:
        """For this agent, and the ones /clear, /resume and /model make after it."""
        set_mode(self.agent.policy, mode)
        self.settings = records.replace(self.settings, yes=mode == "yes", deny=mode == "deny")

    async def switch_session(self, session: Session) -> None:
        await self.agent.aclose()
        self.agent = self._new_agent(session)

    def _new_agent(self, session: Session) -> Agent:
        approver = TerminalApprover(self.out, keys=self.keys, screen=self.screen, folds=self.folds)
        return open_agent(
            self.settings, session, [self.renderer], approver=approver, shared=self.shared
        )

    @staticmethod
    def _history_path() -> Any:
        path = data_dir() / "history"
        with contextlib.suppress(OSError):  # unwritable: the history is not kept, that is all
            path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _toolbar(self) -> str:
        from agentcli.ui.toolbar import fit

        usage = self.agent.usage
        return fit(
            [  # (text, keep): at 40 columns the lowest `keep` are left out first
                (mode_segment(self.agent.policy), 7),
                (sandbox_segment(self.agent.policy), 3),
                (str(self.agent.model), 5),
                (str(self.settings.workspace), 1),
                (self._context_segment(), 4),
                (f"↑{usage.input_tokens:,} ↓{usage.output_tokens:,} tokens", 2),
                ("not saved" if self.agent.session.unsaved else "", 6),
                ("/help", 3),
            ]
        )

    def _context_segment(self) -> str:
        """`ctx 12%`: measured again only when the conversation or the report changed (the
        toolbar is drawn at every key)."""
        from agentcli.ui.context_meter import measure, meter

        conversation, loop = self.agent.session.conversation, self.agent.loop
        key = (
            id(self.agent),
            id(loop),
            len(conversation.messages),
            conversation.start,
            loop.reported,
            len(loop.tools),
        )
        if self._meter[0] != key:
            try:
                shown = meter(measure(self.agent))
            except AgentCliError:  # a bad window setting: /context says why
                shown = "ctx ?"
            self._meter = (key, shown)
        return self._meter[1]

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _banner(self) -> None:
        import shutil

        from agentcli.ui.banner import banner_lines, fit_segments, short_path

        width = shutil.get_terminal_size((80, 24)).columns - 1
        where = one_line(self.settings.workspace)  # a directory name may hold escapes
        for line in banner_lines(__version__, one_line(self.agent.model), where, width):
            self.say(line)
        for item in self.agent.instructions:
            shown = short_path(one_line(item.path), width - len("  instructions: "))
            self.say(f"  instructions: {shown}")
        turns = self.turns()
        if turns:
            said = [
                f"continuing session {self.agent.session.id}",
                f"({plural(turns, 'earlier turn')})",
            ]
            whole = " ".join(said)
            for line in [whole] if len(whole) <= width - 2 else said:  # not cut inside the id
                self.say(f"  {line}")
        from agentcli.providers.table import provider_spec

        spec = provider_spec(self.agent.settings.provider.type)
        if spec is not None and spec.banner is not None:  # a tiny demo model says it is one
            import textwrap

            for line in textwrap.wrap(spec.banner(), max(width - 2, 20)):
                self.say(f"  {line}")
        hints = ["/help for commands", "Ctrl-C cancels", "Ctrl-D exits"]
        for line in fit_segments(hints, width - 2):
            self.say(f"  {line}")
        if turns:
            self.show_conversation()

    def turns(self) -> int:
        """The prompts of this session's conversation so far."""
        return sum(1 for m in self.agent.session.conversation.messages if m.role == "user")

    def show_conversation(self) -> None:
        """The conversation so far, compactly (a resumed session's)."""
        import shutil

        from agentcli.ui.replay import replay_lines

        width = shutil.get_terminal_size((80, 24)).columns - 1
        messages = self.agent.session.conversation.messages
        for line in replay_lines(messages, width, self.renderer.style):
            self.say(line)

    def _resume_hint(self) -> None:
        """On leaving: how to come back to this conversation (when there is one to)."""
        session = self.agent.session
        if self.turns() and not session.unsaved:
            self.say(self.renderer.style.dim(f"resume with: agentcli --resume {session.id}"))

    async def run(self) -> int:
        with ending_signals(self._end, (signal.SIGTERM, signal.SIGHUP)):
            return await self._run()

    def _end(self, code: int) -> None:
        """SIGTERM or a hang-up: stop what runs (the turn, its tools, a `!command`), leave
        the prompt, and exit with `code` once the turn has written its ending."""
        self.done, self.exit_code = True, code
        if self.agent.cancel(code):
            return
        if self._command_task is not None and not self._command_task.done():
            self._command_task.cancel()
        app = self.prompt.app
        if app.is_running:
            app.exit(exception=EOFError())

    def _queue(self, line: str) -> None:
        """A line typed and ended by Enter while a turn runs: sent when the turn is done."""
        self.queued.append(line)
        self.renderer.aside(self.renderer.style.dim(f"  queued: {visible(line)}"))

    def _next_queued(self) -> str | None:
        """The message typed ahead, shown as if typed at the prompt now."""
        if not self.queued:
            return None
        text = self.queued.pop(0)
        self.say(f"› {visible(text)}")
        return text

    async def _run(self) -> int:
        self._banner()
        last_interrupt = 0.0
        while not self.done:
            try:
                text = self._next_queued()
                if text is None:
                    # The draft typed during the turn (after a stopped one, the lines
                    # queued too: they are not sent) is where the prompt starts.
                    text = await self.prompt.prompt_async("› ", default=self.keys.take_draft())
            except KeyboardInterrupt:
                now = time.monotonic()
                if now - last_interrupt < EXIT_WINDOW_SECONDS:
                    break
                last_interrupt = now
                self.say("(press Ctrl-C again to exit, or Ctrl-D, or type /exit)")
                continue
            except EOFError:
                break
            text = text.strip()
            if not text or self.done:
                continue
            try:
                if text.startswith("/"):
                    await self.slash.run(text)
                elif text.startswith("!"):
                    await self._user_command(text[1:].strip())
                else:
                    await self.turn(text)
            except AgentCliError as error:
                self.say(f"error: {error}")
        await self.agent.aclose(reason="prompt_input_exit")  # SessionEnd hooks' reason
        await self.shared.aclose()  # MCP servers and their sandbox, kept across /clear and /resume
        self._resume_hint()
        return self.exit_code

    async def turn(self, text: str) -> None:
        message, notes, images = await expand_chat_mentions(
            text,
            self.agent.workspace,
            self.registry,
            self.say,
            image_limit=self.agent.context.image_limit,
            sees_images=bool(getattr(self.agent.provider, "takes_images", False)),
        )
        if self.skills is not None and self.skills.found:
            from agentcli.habits.skills import attach_mentioned

            message, said = attach_mentioned(message, self.skills, self.agent.workspace.root)
            notes = [*notes, *said]
        for note in notes:
            self.say(f"  {visible(note)}")
        if self.pending_context:
            message = "\n\n".join([*self.pending_context, message])
            self.pending_context = []
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._cancel_turn)
        try:
            with self.keys.watching():
                summary = await self.agent.run_turn(message, images=images)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if summary.status == "cancelled" and self.queued:
            # Stopped: what was typed ahead waits in the prompt, to send or change.
            self.keys.draft = "\n".join([*self.queued, self.keys.draft]).strip()
            self.queued = []

    def _cancel_turn(self) -> None:
        self.agent.cancel(ExitCode.INTERRUPTED)

    async def _user_command(self, command: str) -> None:
        """`!command`: the user's own action, run at once (no approval), shown, and given to
        the model as context with the next message."""
        from agentcli.process.capture import OutputCapture
        from agentcli.process.run import run_command
        from agentcli.tools.shell import shell_argv

        if not command:
            self.say("usage: !COMMAND")
            return
        capture = OutputCapture(self.agent.context.output_limit)
        loop = asyncio.get_running_loop()
        task = self._command_task = asyncio.current_task()
        loop.add_signal_handler(signal.SIGINT, task.cancel)  # type: ignore[union-attr]
        try:
            result = await run_command(
                shell_argv(command),
                cwd=str(self.agent.workspace.root),
                env=self.agent.context.child_env,
                timeout=600,
                capture=capture,
                live=self.agent.processes,
            )
        except asyncio.CancelledError:
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            self.say("(interrupted)")
            return
        finally:
            self._command_task = None
            loop.remove_signal_handler(signal.SIGINT)
        output = capture.text()
        shown = visible(output)  # a file the command printed may carry escape sequences
        self.out.write(shown if shown.endswith("\n") or not shown else shown + "\n")
        self.say(self.renderer.style.dim(f"exit code {result.exit_code}"))
        self.pending_context.append(
            f"I ran `{command}` myself (exit code {result.exit_code}):\n```\n{output.rstrip()}\n```"
        )


def run_repl(settings: RunSettings, session: Session) -> int:
    async def main() -> int:
        try:
            repl = Repl(settings, session)
        except AgentCliError as error:
            session.close()
            sys.stderr.write(f"agentcli: error: {error}\n")
            return error.exit_code
        return await repl.run()

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(main())
    return ExitCode.OK
