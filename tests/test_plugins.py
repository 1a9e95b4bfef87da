"""Plug-ins through entry points: a typed function with a docstring becomes a tool (schema
from the hints, description from the docstring), sync or async; the fixture package in
tests/fixtures/plugin (installed into the test venv) registers tools and a provider; a
plug-in that fails is said once and skipped; nothing is loaded for --version or --help."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import pytest

from agentcli.risk import Risk
from agentcli.tools.base import ToolContext, ToolFailure
from agentcli.tools.function_tool import FunctionTool, PluginError
from agentcli.tools.registry import ToolRegistrar
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

FIXTURE = Path(__file__).parent / "fixtures" / "plugin"


def make(fn: Any, **kwargs: Any) -> FunctionTool:
    return FunctionTool(
        fn,
        name=kwargs.pop("name", None),
        risk=kwargs.pop("risk", "medium"),
        source="plugin:test",
        **kwargs,
    )


def run(tool: FunctionTool, **args: Any) -> Any:
    return asyncio.run(tool.execute(args, ToolContext(Workspace("."))))


# --- functions as tools


def test_schema_and_description_come_from_hints_and_docstring() -> None:
    def search(
        query: str,
        limit: int = 5,
        exact: bool = False,
        tags: list[str] | None = None,
        mode: Literal["fast", "full"] = "fast",
    ) -> str:
        """Search the notes.

        Args:
            query: What to look for.
            limit: How many results.
        """
        return query

    tool = make(search, risk="low")
    assert tool.name == "search" and tool.description == "Search the notes."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "How many results.", "default": 5},
            "exact": {"type": "boolean", "default": False},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"enum": ["fast", "full"], "default": "fast"},
        },
        "required": ["query"],
    }
    assert tool.assess({}, ToolContext(Workspace("."))).risk is Risk.LOW


def test_sync_and_async_functions_run_and_return_text_or_json() -> None:
    def total(values: list[float]) -> dict:
        """Add numbers."""
        return {"total": sum(values)}

    async def shout(text: str) -> str:
        """Shout."""
        await asyncio.sleep(0)
        return text.upper()

    summed = run(make(total), values=[1, 2.5])
    assert json.loads(summed.content) == {"total": 3.5}
    assert run(make(shout, name="loud"), text="hi").content == "HI"


def test_an_exception_is_an_error_result_and_bad_definitions_are_refused() -> None:
    def broken(x: int) -> str:
        """Breaks."""
        raise KeyError("nope")

    with pytest.raises(ToolFailure, match="broken: KeyError"):
        run(make(broken), x=1)

    def undocumented(x: int) -> int:
        return x

    with pytest.raises(PluginError, match="docstring"):
        make(undocumented)
    with pytest.raises(PluginError, match="risk"):
        make(broken, risk="none")
    register = ToolRegistrar("plugin:test")
    with pytest.raises(PluginError, match="letters, digits"):
        register(broken, name="bad name")


# --- the installed fixture plug-in, end to end


@pytest.fixture(scope="session")
def fixture_installed() -> None:
    """The fixture package is installed by .ci/run; installed here if it is not."""
    if "fixture" not in {ep.name for ep in entry_points(group="agentcli.tools")}:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-e",
                str(FIXTURE),
            ],
            check=False,
        )
        if "fixture" not in {ep.name for ep in entry_points(group="agentcli.tools")}:
            pytest.skip("the fixture plug-in could not be installed")


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def test_plug_in_tools_are_sent_run_and_fail_as_results(
    fixture_installed: None, run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                {"id": "c1", "name": "word_count", "arguments": {"text": "one two three"}},
                {"id": "c2", "name": "echo_twice", "arguments": {"message": "hey", "times": 2}},
                {"id": "c3", "name": "explode", "arguments": {"reason": "on purpose"}},
            ]
        ),
        Reply.text(["Done."]),
    )
    result = run_cli(["run", "count"], server=server, env={"AGENTCLI_FIXTURE_PLUGIN": "on"})

    assert result.returncode == 0, result.stderr
    sent = {t["function"]["name"]: t["function"] for t in server.requests[0].json["tools"]}
    assert sent["word_count"]["description"].startswith("Count the words")
    assert sent["word_count"]["parameters"]["properties"]["unit"]["enum"] == ["words", "lines"]
    counted, echoed, exploded = tool_messages(server, 1)
    assert json.loads(counted["content"]) == {"unit": "words", "count": 3}
    assert echoed["content"] == "hey hey"
    assert "ValueError: on purpose" in exploded["content"]


def test_without_the_plug_in_s_switch_nothing_is_registered(
    fixture_installed: None, run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["Hi."]))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    names = {t["function"]["name"] for t in server.requests[0].json["tools"]}
    assert "word_count" not in names and "read_file" in names


def test_a_broken_plug_in_is_said_once_and_skipped(
    fixture_installed: None, run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["Hi."]))
    result = run_cli(["run", "hi"], server=server, env={"AGENTCLI_FIXTURE_PLUGIN": "broken"})
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "plug-in fixture" in line]
    assert len(lines) == 1, result.stderr
    assert "asked to break" in lines[0] and "skipped" in lines[0]
    assert server.requests[0].json["tools"]  # the built-ins go on


def test_a_name_clash_keeps_the_built_in(
    fixture_installed: None, run_cli: RunCli, server: ScriptedServer
) -> None:
    call = {"id": "c1", "name": "read_file", "arguments": {"path": "README.md"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["Done."]))
    result = run_cli(
        ["run", "read", "--yes"], server=server, env={"AGENTCLI_FIXTURE_PLUGIN": "clash"}
    )
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if "first one is kept" in line]
    assert "read_file from plugin:fixture" in line
    assert "Demo project" in tool_messages(server, 1)[0]["content"]


def test_plugins_command_lists_tools_providers_and_failures(
    fixture_installed: None, run_cli: RunCli
) -> None:
    listing = run_cli(["plugins", "--json"], env={"AGENTCLI_FIXTURE_PLUGIN": "on"})
    assert listing.returncode == 0, listing.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(listing.stdout)["plugins"]}
    tools = rows[("agentcli.tools", "fixture")]
    assert tools["state"] == "loaded" and "agentcli-fixture-plugin" in tools["package"]
    assert {t["name"] for t in tools["tools"]} == {"word_count", "echo_twice", "explode"}
    assert ("agentcli.providers", "fixture-echo") in rows

    broken = run_cli(["plugins"], env={"AGENTCLI_FIXTURE_PLUGIN": "broken"})
    assert "fixture  failed" in broken.stdout and "asked to break" in broken.stdout
    listed = run_cli(["tools", "list"], env={"AGENTCLI_FIXTURE_PLUGIN": "on"})
    assert "plugin:fixture" in listed.stdout


def test_a_provider_plug_in_is_a_provider_type(
    fixture_installed: None, run_cli: RunCli, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[providers.parrot]\ntype = "fixture-echo"\n', encoding="utf-8")
    result = run_cli(["run", "-m", "parrot", "hello there"], env={"AGENTCLI_FIXTURE_PLUGIN": "on"})
    assert result.returncode == 0, result.stderr
    assert "echo (parrot): hello there" in result.stdout
    unknown = run_cli(["run", "-m", "parrot", "hi"])  # the plug-in registers nothing now
    assert unknown.returncode == 2 and "providers.parrot.type must be one of" in unknown.stderr


def test_version_and_help_load_no_plug_in_and_no_mcp() -> None:
    probe = (
        "import sys; from agentcli.__main__ import main\n"
        "for argv in (['agentcli', '--version'], ['agentcli', '--help']):\n"
        "    sys.argv = argv\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        "loaded = [m for m in sys.modules if m.startswith(('mcp', 'agentcli.plugins',"
        " 'agentcli.mcp', 'importlib.metadata', 'agentcli_fixture_plugin'))]\n"
        "print(sorted(loaded), file=sys.stderr)"
    )
    env = {"AGENTCLI_FIXTURE_PLUGIN": "on", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_entry_points_are_cached_until_a_distribution_is_installed(tmp_path: Path) -> None:
    """The second run reads the plug-ins from the cache (importlib.metadata, which reads
    every installed package, is not even imported); installing one is seen at once."""
    site = tmp_path / "site"
    site.mkdir()
    probe = (
        "import sys\nfrom agentcli.tools.plugin_source import plugin_sources\n"
        "sources = plugin_sources()\nfor s in sources:\n    s.load()\n"
        "print(sorted((s.entry.name, s.origin, s.state, sorted(t.name for t in s.tools()))"
        " for s in sources), 'importlib.metadata' in sys.modules)"
    )
    env = {
        "PATH": "",
        "AGENTCLI_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(site),
        # (a __pycache__ made in `site` by the first import would count as a change)
        "PYTHONDONTWRITEBYTECODE": "1",
    }

    quiet = tmp_path / "cwd"  # `-c` puts the working directory on sys.path: one nobody
    quiet.mkdir()  # else writes in (the tests beside this one make files in /tmp)

    def plugins() -> tuple[list[Any], bool]:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=quiet,
        )
        found, searched = done.stdout.rsplit(" ", 1)
        return [p for p in eval(found) if p[0] == "cachetest"], searched.strip() == "True"

    assert plugins() == ([], True)
    assert plugins() == ([], False)  # from the cache
    dist = site / "agentcli_cachetest-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentcli-cachetest\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[agentcli.tools]\ncachetest = agentcli_cachetest\n")
    (site / "agentcli_cachetest.py").write_text(
        "def shout(text: str) -> str:\n    '''Shout the text.'''\n    return text.upper()\n\n\n"
        "def register_tools(register):\n    register(shout, risk='low')\n"
    )
    installed = [("cachetest", "agentcli-cachetest 0.1", "loaded", ["shout"])]
    assert plugins() == (installed, True)  # sys.path's directory changed: searched again
    assert plugins() == (installed, False)
