"""The built-in tools, registered through the same hook as a plug-in's
(`register_tools(register)`, see agentcli.plugins)."""

from __future__ import annotations

from typing import Any


def register_tools(register: Any) -> None:
    from agentcli.tools.ask_user import AskUser
    from agentcli.tools.calculator import Calculator
    from agentcli.tools.create_directory import CreateDirectory
    from agentcli.tools.edit_file import EditFile
    from agentcli.tools.list_directory import ListDirectory
    from agentcli.tools.read_file import ReadFile
    from agentcli.tools.search import SearchContent, SearchFiles
    from agentcli.tools.shell import JobKill, JobOutput, RunPython, RunShell
    from agentcli.tools.system_info import SystemInfo
    from agentcli.tools.web import FetchUrl
    from agentcli.tools.write_file import WriteFile

    for tool in (
        ReadFile(),
        ListDirectory(),
        SearchFiles(),
        SearchContent(),
        CreateDirectory(),
        WriteFile(),
        EditFile(),
        RunShell(),
        RunPython(),
        JobOutput(),
        JobKill(),
        FetchUrl(),
        Calculator(),
        SystemInfo(),
        AskUser(),
    ):
        register(tool)
