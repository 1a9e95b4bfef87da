"""Provider-defined tools: the provider fixes the name and schema, agentcli executes them.
Anthropic's `bash` and `text_editor` are mapped onto run_shell and the file tools, so they
get the same classification, rules, approvals and workspace confinement: a rule written
for `run_shell` or `edit_file` applies to them too."""

from __future__ import annotations

from typing import Any

from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.edit_file import EditFile
from agentcli.tools.file_access import read_existing_text, walk_base
from agentcli.tools.fs_write import write_at
from agentcli.tools.list_directory import ListDirectory
from agentcli.tools.read_file import ReadFile
from agentcli.tools.shell import RunShell
from agentcli.tools.write_file import WriteFile


class AnthropicBash(Tool):
    name = "bash"
    description = "Anthropic's bash tool, run as agentcli's run_shell."
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"command": {"type": "string"}, "restart": {"type": "boolean"}},
    }
    source = "anthropic (as run_shell)"
    risk_summary = RunShell.risk_summary
    native = {"type": "bash_20250124", "name": "bash"}  # noqa: RUF012
    # It starts processes: the executor gives it run_shell's sandbox profile (without this
    # it ran with none at all), and checkpoints see its writes as a command's.
    runs_commands = True

    def __init__(self) -> None:
        self.shell = RunShell()

    def policy_tool(self, args: dict[str, Any]) -> str:
        return "run_shell"

    def requested_sandbox(self, args: dict[str, Any]) -> str | None:
        return None  # Anthropic's schema has no such field: an extra one widens nothing

    def _shell_args(self, args: dict[str, Any]) -> dict[str, Any]:
        if "command" not in args:
            raise ToolFailure("give a command to run")
        return {"command": args["command"]}

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        if args.get("restart") and "command" not in args:
            return Assessment(Risk.LOW, "restarting does nothing here: every command is fresh")
        return self.shell.assess(self._shell_args(args), ctx)

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        if "command" not in args:
            return super().rule_subjects(args, ctx)
        return self.shell.rule_subjects(self._shell_args(args), ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if args.get("restart") and "command" not in args:
            return ToolOutput(content="the shell was restarted (each command runs fresh)")
        return await self.shell.execute(self._shell_args(args), ctx)

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "anthropic": self.native}


class AnthropicTextEditor(Tool):
    name = "str_replace_based_edit_tool"
    writes_files = True  # checkpoints keep its target first
    path_arguments = ("path",)
    description = "Anthropic's text editor tool, run as agentcli's file tools."
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "command": {"enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
            "path": {"type": "string"},
            "view_range": {"type": "array", "items": {"type": "integer"}},
            "file_text": {"type": "string"},
            "old_str": {"type": "string"},
            "new_str": {"type": "string"},
            "insert_line": {"type": "integer", "minimum": 0},
        },
        "required": ["command", "path"],
    }
    source = "anthropic (as the file tools)"
    risk_summary = "as read_file, list_directory, write_file or edit_file"
    native = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}  # noqa: RUF012

    def _target(self, args: dict[str, Any], ctx: ToolContext) -> tuple[Tool, dict[str, Any]]:
        """The agentcli tool and arguments this command is, for policy and execution."""
        command, path = args["command"], args["path"]
        if command == "view":
            if ctx.workspace.resolve(path).path.is_dir():
                return ListDirectory(), {"path": path}
            mapped: dict[str, Any] = {"path": path}
            view_range = args.get("view_range") or []
            if len(view_range) == 2:
                start, end = view_range
                mapped["offset"] = max(int(start), 1)
                if end != -1:
                    mapped["limit"] = max(int(end) - int(start) + 1, 1)
            return ReadFile(), mapped
        if command == "create":
            return WriteFile(), {"path": path, "content": args.get("file_text", "")}
        if command == "str_replace":
            old, new = args.get("old_str", ""), args.get("new_str", "")
            return EditFile(), {"path": path, "old_text": old, "new_text": new}
        if command == "insert":
            return WriteFile(), {"path": path, "content": ""}  # risk and rules of a write
        raise ToolFailure(f"{command} is not supported: edits are written at once, not undone")

    def policy_tool(self, args: dict[str, Any]) -> str:
        return {"view": "read_file", "create": "write_file"}.get(
            args.get("command", ""), "edit_file"
        )

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        try:
            tool, mapped = self._target(args, ctx)
        except ToolFailure as failure:
            return Assessment(Risk.LOW, str(failure))  # it will fail without doing anything
        return tool.assess(mapped, ctx)

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        try:
            tool, mapped = self._target(args, ctx)
        except ToolFailure:
            return super().rule_subjects(args, ctx)
        return tool.rule_subjects(mapped, ctx)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        try:
            tool, mapped = self._target(args, ctx)
        except ToolFailure:
            return None
        return None if args["command"] == "insert" else tool.preview(mapped, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        tool, mapped = self._target(args, ctx)
        if args["command"] == "insert":
            return self._insert(args, ctx)
        return await tool.execute(mapped, ctx)

    def _insert(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        target = ctx.workspace.resolve(args["path"])
        shown = ctx.workspace.relative(target.path)
        base = walk_base(ctx, target, shown, writing=True)
        decoded = read_existing_text(target.path, base, shown)
        if decoded is None:
            raise ToolFailure(f"no such file: {shown}")
        lines = decoded.text.splitlines(keepends=True)
        at = int(args.get("insert_line", 0))
        if at > len(lines):
            raise ToolFailure(f"{shown} has {len(lines)} lines; cannot insert after line {at}")
        newline = "\r\n" if decoded.crlf else "\n"
        text = decoded.to_file_newlines(args.get("new_str", ""))
        if not text.endswith(("\n", "\r\n")):
            text += newline
        if at and not lines[at - 1].endswith(("\n", "\r")):
            lines[at - 1] += newline
        lines.insert(at, text)
        ctx.before_write(target.path)
        write_at(target.path, base, shown, decoded.encode("".join(lines)))
        ctx.after_write(target.path)
        return ToolOutput(content=f"inserted after line {at} of {shown}", summary="inserted")

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "anthropic": self.native}


PROVIDER_TOOLS = {"bash": AnthropicBash, "text_editor": AnthropicTextEditor}
