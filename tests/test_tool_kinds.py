"""The kinds of tools beyond the built-ins: dynamic tools (command tools from the
configuration, through `ToolRegistry.add_dynamic`) and Anthropic's provider-defined `bash` and
`text_editor`, which run as run_shell and the file tools under the same policy."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.assembly import builtin_tools
from agentcli.risk import Risk
from agentcli.sandbox.mechanisms import detect
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.dynamic import (
    DynamicSpec,
    DynamicToolError,
    command_argv,
    command_tool_specs,
)
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.root import Workspace
from tests.conftest import (
    NOTES_LINES,
    OUTSIDE_LINES,
    README_LINES,
    RunCli,
    assert_one_error,
    error_lines,
    numbered,
    use_backend,
)
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer

_FOUND = detect()
SANDBOX_BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not _FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not _FOUND.bwrap, reason="no bubblewrap")),
]
MODEL = "claude-scripted"
KEY = "sk-ant-scripted-key"
PYTHON = shlex.quote(sys.executable)
HOSTILE = "a b; rm -rf x $(id) `id` 'q' \"dq\" {other} | cat > pwned &"


def write_user_config(cli_home: Path, text: str) -> Path:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


# =====================================================================================
# Dynamic tools: unit
# =====================================================================================


async def _noop(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return ToolOutput(content="ok")


def spec(name: str = "greet", **changes: Any) -> DynamicSpec:
    values: dict[str, Any] = {
        "name": name,
        "description": "says hello",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
        "risk": "low",
        "source": "config",
        "run": _noop,
    }
    values.update(changes)
    return DynamicSpec(**values)


def ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root))


@pytest.mark.parametrize(
    "name",
    ["", "has space", "semi;colon", "x" * 65, "dots.in.name", "ünïcode", "slash/name", "a\nb"],
)
def test_add_dynamic_rejects_bad_names(name: str) -> None:
    registry = ToolRegistry()
    with pytest.raises(DynamicToolError) as caught:
        registry.add_dynamic(spec(name))
    message = str(caught.value)
    assert repr(name) in message
    assert "letters" in message and "64" in message
    assert len(registry) == 0


@pytest.mark.parametrize("name", ["a", "x" * 64, "my-tool_2", "UPPER"])
def test_add_dynamic_accepts_good_names(name: str) -> None:
    registry = ToolRegistry()
    tool = registry.add_dynamic(spec(name))
    assert registry.get(name) is tool
    assert tool.source == "config"


@pytest.mark.parametrize("name", ["read_file", "run_shell", "greet"])
def test_add_dynamic_rejects_duplicate_names(name: str) -> None:
    registry = builtin_tools()
    registry.add_dynamic(spec("greet"))
    before = len(registry)
    with pytest.raises(DynamicToolError) as caught:
        registry.add_dynamic(spec(name, source="mcp:other"))
    assert repr(name) in str(caught.value)
    assert "already exists" in str(caught.value)
    assert len(registry) == before
    assert registry.get(name).source != "mcp:other"  # the first one stays


@pytest.mark.parametrize(
    "parameters",
    [{"type": "array"}, {"type": "string"}, [], "object", None, 5],
    ids=["array", "string", "list", "str", "none", "int"],
)
def test_add_dynamic_rejects_non_object_schemas(parameters: Any) -> None:
    with pytest.raises(DynamicToolError) as caught:
        ToolRegistry().add_dynamic(spec(parameters=parameters))
    assert "greet" in str(caught.value)
    assert "object" in str(caught.value)


@pytest.mark.parametrize(
    ("parameters", "needle"),
    [
        ({"type": "object", "properties": {"x": {"type": "nope"}}}, "nope"),
        ({"type": "object", "required": "x"}, "x"),
        ({"type": "object", "properties": []}, "[]"),
        ({"type": "object", "properties": {"n": {"minimum": "ten"}}}, "ten"),
    ],
    ids=["unknown-type", "required-not-list", "properties-not-object", "minimum-not-number"],
)
def test_add_dynamic_rejects_invalid_json_schemas(parameters: Any, needle: str) -> None:
    with pytest.raises(DynamicToolError) as caught:
        ToolRegistry().add_dynamic(spec(parameters=parameters))
    message = str(caught.value)
    assert message.startswith("greet: invalid parameters schema"), message
    assert needle in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("risk", "expected"),
    [
        ("low", Risk.LOW),
        ("medium", Risk.MEDIUM),
        ("high", Risk.HIGH),
        (None, Risk.HIGH),
        ("", Risk.HIGH),
        ("extreme", Risk.HIGH),
        ("safe", Risk.HIGH),
        (1, Risk.HIGH),
    ],
)
def test_unknown_or_missing_risk_is_high(tmp_path: Path, risk: Any, expected: Risk) -> None:
    tool = ToolRegistry().add_dynamic(spec(risk=risk))
    assessment = tool.assess({"who": "x"}, ctx(tmp_path))
    assert assessment.risk is expected
    assert tool.risk_summary.startswith(expected.label)
    rated = risk in ("low", "medium", "high")
    assert ("unrated" in tool.risk_summary) is not rated
    assert ("not rated" in assessment.reason) is not rated


@pytest.mark.parametrize("risk", ["LOW", "Medium", "HIGH"])
def test_risk_names_in_another_case_are_treated_consistently(tmp_path: Path, risk: str) -> None:
    # Either a case variant is a rating (and then not called "unrated") or it is not (and
    # then it is high): never low risk and "unrated" at once.
    tool = ToolRegistry().add_dynamic(spec(risk=risk))
    assessment = tool.assess({"who": "x"}, ctx(tmp_path))
    unrated = "unrated" in tool.risk_summary or "not rated" in assessment.reason
    if unrated:
        assert assessment.risk is Risk.HIGH, (assessment, tool.risk_summary)
    else:
        assert assessment.risk.label == risk.lower()


def test_command_tool_specs_default_parameters_from_placeholders() -> None:
    [made] = command_tool_specs({"deploy": {"command": "make deploy ENV={env} TAG={tag}"}}, "x")
    assert made.name == "deploy"
    assert made.parameters["required"] == ["env", "tag"]
    assert made.parameters["properties"] == {"env": {"type": "string"}, "tag": {"type": "string"}}
    assert made.risk is None  # unrated: high
    assert "make deploy" in made.description


def test_a_placeholder_used_twice_makes_a_valid_tool() -> None:
    # `cp {file} {file}.bak`: one parameter, used twice.
    [made] = command_tool_specs({"backup": {"command": "cp {file} {file}.bak"}}, "config")
    tool = builtin_tools().add_dynamic(made)
    assert tool.parameters["required"] == ["file"]
    assert command_argv("cp {file} {file}.bak", {"file": "a b"}) == ["cp", "a b", "a b.bak"]


def test_command_tool_specs_need_a_command() -> None:
    with pytest.raises(DynamicToolError) as caught:
        command_tool_specs({"broken": {"description": "no command"}}, "config")
    assert "tools.broken" in str(caught.value)
    assert "command" in str(caught.value)


@pytest.mark.parametrize(
    ("template", "args", "argv"),
    [
        ("echo {who}", {"who": HOSTILE}, ["echo", HOSTILE]),
        ("echo --name={who}", {"who": "a b"}, ["echo", "--name=a b"]),
        ("echo x{a}y{b}z", {"a": "1 2", "b": ";"}, ["echo", "x1 2y;z"]),
        ("echo '{a} and {b}'", {"a": "A", "b": "B"}, ["echo", "A and B"]),
        ("echo {a}", {"a": "{b}", "b": "never"}, ["echo", "{b}"]),
        ("echo {n} {flag}", {"n": 5, "flag": True}, ["echo", "5", "True"]),
        ("echo {a}", {"a": ""}, ["echo", ""]),
        ("echo {a}", {"a": "line1\nline2"}, ["echo", "line1\nline2"]),
        ("run {a} {a}", {"a": "-rf /"}, ["run", "-rf /", "-rf /"]),
    ],
    ids=[
        "hostile",
        "inside-word",
        "two-in-a-word",
        "quoted-word",
        "no-recursion",
        "non-strings",
        "empty",
        "newline",
        "twice",
    ],
)
def test_command_argv_substitutes_inside_words(
    template: str, args: dict[str, Any], argv: list[str]
) -> None:
    assert command_argv(template, args) == argv


def test_command_argv_missing_value_is_a_tool_failure() -> None:
    with pytest.raises(ToolFailure) as caught:
        command_argv("greet {who} {when}", {"who": "me"})
    assert "'when'" in str(caught.value)


# =====================================================================================
# Dynamic tools: end to end (OpenAI-compatible scripted server)
# =====================================================================================

# Prints $# (argc) and the arguments exactly as the program received them.
ARGV_COMMAND = (
    PYTHON + """ -c 'import sys,json; print(json.dumps({"argc": len(sys.argv) - 1, """
    """"argv": sys.argv[1:]}))'"""
)
GREET_COMMAND = PYTHON + """ -c 'import sys; print("Hello, " + sys.argv[1] + "!")'"""
STAMP_COMMAND = PYTHON + """ -c 'open("stamp.txt", "w").write("stamped")'"""

ARGV_TOOL = f"""
[tools.show_args]
description = "Prints its arguments as JSON."
command = {toml_str(ARGV_COMMAND + " {arg} pre-{other}-post")}
risk = "low"
"""

GREET_TOOL = f"""
[tools.greet]
description = "Greets someone by name."
command = {toml_str(GREET_COMMAND + " {name}")}
risk = "low"
[tools.greet.parameters]
type = "object"
required = ["name"]
[tools.greet.parameters.properties.name]
type = "string"
description = "Who to greet."
"""

UNRATED_TOOL = f"""
[tools.stamp]
description = "Writes a stamp file."
command = {toml_str(STAMP_COMMAND)}
"""


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def request_tools(server: ScriptedServer, index: int = 0) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in server.requests[index].json["tools"]}


def list_tools(run_cli: RunCli, **kw: Any) -> dict[str, dict[str, Any]]:
    result = run_cli(["tools", "list", "--json"], **kw)
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_values_reach_the_command_as_one_literal_argument(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    write_user_config(cli_home, ARGV_TOOL)
    (workspace / "x").write_text("must survive", encoding="utf-8")
    server.enqueue(
        Reply.tool_calls(
            [{"id": "call_args", "name": "show_args", "arguments": {"arg": HOSTILE, "other": "$x"}}]
        ),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "show the args"], server=server)

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    printed = [line for line in tool["content"].splitlines() if line.startswith("{")]
    assert len(printed) == 1, tool["content"]
    assert json.loads(printed[0]) == {"argc": 2, "argv": [HOSTILE, "pre-$x-post"]}
    assert (workspace / "x").read_text(encoding="utf-8") == "must survive"
    assert not (workspace / "pwned").exists()


def test_config_tool_is_listed_sent_and_run(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_user_config(cli_home, GREET_TOOL)
    listing = run_cli(["tools", "list"])
    assert listing.returncode == 0, listing.stderr
    [row] = [line for line in listing.stdout.splitlines() if line.split()[:1] == ["greet"]]
    assert row.split()[1:] == ["config", "low"]  # name, source, risk

    server.enqueue(
        Reply.tool_calls([{"id": "call_g", "name": "greet", "arguments": {"name": "Ada; id"}}]),
        Reply.text(["Greeted."]),
    )
    result = run_cli(["run", "greet Ada"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Greeted.\n"
    sent = request_tools(server)["greet"]
    assert sent["description"] == "Greets someone by name."
    assert sent["parameters"]["required"] == ["name"]
    assert sent["parameters"]["properties"]["name"]["type"] == "string"
    [tool] = tool_messages(server, 1)
    assert tool["tool_call_id"] == "call_g"
    assert "Hello, Ada; id!" in tool["content"]


@pytest.mark.parametrize(("flags", "code"), [([], 4), (["--yes"], 0)], ids=["no-flags", "yes"])
def test_unrated_config_tool_asks(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    workspace: Path,
    flags: list[str],
    code: int,
) -> None:
    write_user_config(cli_home, UNRATED_TOOL)
    if not flags:
        assert list_tools(run_cli)["stamp"]["risk"] == "high (unrated)"
    server.enqueue(
        Reply.tool_calls([{"id": "call_s", "name": "stamp", "arguments": {}}]),
        Reply.text(["Finished."]),
    )
    result = run_cli(["run", *flags, "stamp it"], server=server)

    assert result.returncode == code, result.stderr
    [tool] = tool_messages(server, 1)
    if code == 0:
        assert (workspace / "stamp.txt").read_text(encoding="utf-8") == "stamped"
    else:
        assert "denied" in tool["content"].lower()
        assert not (workspace / "stamp.txt").exists()


@pytest.mark.parametrize(
    ("config", "needles"),
    [
        ('[tools.bad]\ncommand = "echo"\nparameters = {type = "array"}\n', ("bad", "object")),
        (
            '[tools.bad]\ncommand = "echo"\n'
            '[tools.bad.parameters]\ntype = "object"\nproperties = {x = {type = "nope"}}\n',
            ("bad", "nope"),
        ),
        ('[tools."bad name"]\ncommand = "echo"\n', ("bad name",)),
        ('[tools.bad]\ndescription = "no command"\n', ("tools.bad", "command")),
        ('[tools.bad]\ncommand = "echo"\nexamples = ["echo it"]\n', ("tools.bad.examples",)),
    ],
    ids=["array-schema", "invalid-schema", "bad-name", "no-command", "bad-examples"],
)
def test_config_tool_with_a_bad_definition_is_a_usage_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, config: str, needles: tuple[str, ...]
) -> None:
    write_user_config(cli_home, config)
    server.enqueue(Reply.text(["never"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 2
    assert_one_error(result, *needles)
    assert result.stdout == ""
    assert server.requests == []


def test_config_tool_examples_route_the_local_model_and_are_not_sent_to_others(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    examples = '[[tools.greet.examples]]\nrequest = "say hi to Bob"\narguments = { name = "Bob" }\n'
    write_user_config(cli_home, GREET_TOOL + examples)
    [made] = command_tool_specs(
        {
            "greet": {
                "command": "echo {name}",
                "examples": [{"request": "say hi to Bob", "arguments": {"name": "Bob"}}],
            }
        },
        "config",
    )
    assert builtin_tools().add_dynamic(made).spec()["examples"] == [
        ["say hi to Bob", {"name": "Bob"}]
    ]
    server.enqueue(Reply.text(["Hi."]))
    result = run_cli(["run", "greet Ada"], server=server)

    assert result.returncode == 0, result.stderr
    assert set(request_tools(server)["greet"]) == {"name", "description", "parameters"}


def test_tools_list_with_a_bad_config_tool_is_a_usage_error(
    run_cli: RunCli, cli_home: Path
) -> None:
    write_user_config(cli_home, '[tools.bad]\ncommand = "echo"\nparameters = {type = "array"}\n')
    listing = run_cli(["tools", "list"])

    assert listing.returncode == 2
    assert_one_error(listing, "bad", "object")
    assert listing.stdout == ""


def test_untrusted_project_tool_is_ignored_until_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    project = workspace / ".agentcli" / "config.toml"
    project.parent.mkdir()
    project.write_text('[tools.projtool]\ncommand = "echo from the project"\n', encoding="utf-8")

    assert "projtool" not in list_tools(run_cli)
    server.enqueue(Reply.text(["one"]))
    first = run_cli(["run", "hi"], server=server)
    assert first.returncode == 0, first.stderr
    assert "projtool" not in request_tools(server, 0)
    assert "agentcli trust" in first.stderr  # says why the project file was not applied

    trusted = run_cli(["trust"])
    assert trusted.returncode == 0, trusted.stderr

    assert list_tools(run_cli)["projtool"]["source"] == "config"


# =====================================================================================
# Provider-defined tools: Anthropic bash and text_editor, end to end
# =====================================================================================

CLIENT_TOOLS = '[providers.anthropic]\nclient_tools = ["bash", "text_editor"]\n'
EDITOR = "str_replace_based_edit_tool"


@pytest.fixture
def anthropic(cli_home: Path) -> Iterator[ScriptedAnthropic]:
    write_user_config(cli_home, CLIENT_TOOLS)
    with ScriptedAnthropic() as srv:
        yield srv
    assert srv.errors == [], "unexpected exceptions inside the scripted server"


@pytest.fixture
def arun(run_cli: RunCli, anthropic: ScriptedAnthropic):  # type: ignore[no-untyped-def]
    def run(*args: str) -> Any:
        env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": KEY}
        return run_cli(["run", "--model", f"anthropic:{MODEL}", *args], env=env)

    return run


def results(srv: ScriptedAnthropic, index: int) -> list[dict[str, Any]]:
    last = srv.requests[index].json["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b["type"] == "tool_result"]


def text_of(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def bash(command: str, call_id: str) -> dict[str, Any]:
    return {"name": "bash", "input": {"command": command}, "id": call_id}


def editor(call_id: str, **input: Any) -> dict[str, Any]:
    return {"name": EDITOR, "input": input, "id": call_id}


def test_provider_tools_are_sent_natively_and_listed(
    arun: Any, anthropic: ScriptedAnthropic, run_cli: RunCli
) -> None:
    anthropic.enqueue(AReply.tool_use([bash("ls", "toolu_ls")]), AReply.text("Listed."))
    result = arun("--output", "json", "list the files")

    assert result.returncode == 0, result.stderr
    tools = anthropic.requests[0].json["tools"]
    assert {"type": "bash_20250124", "name": "bash"} in tools
    assert {"type": "text_editor_20250728", "name": EDITOR} in tools
    native = [t for t in tools if t["name"] in ("bash", EDITOR)]
    assert len(native) == 2
    assert all("input_schema" not in t for t in native)
    names = [t["name"] for t in tools]
    assert len(names) == len(set(names)), names

    # `ls` is read-only: it ran without asking, classified as run_shell classifies it
    doc = json.loads(result.stdout)
    [call] = doc["toolCalls"]
    assert call["name"] == "bash"
    assert call["approval"]["decision"] == "allow"
    assert call["approval"]["risk"] == "low"
    [ls] = results(anthropic, 1)
    assert ls["tool_use_id"] == "toolu_ls"
    assert ls["is_error"] is False
    assert "README.md" in text_of(ls) and "notes.txt" in text_of(ls)

    explained = run_cli(["policy", "explain", "run_shell", "ls", "--json"])
    assert json.loads(explained.stdout)["risk"] == call["approval"]["risk"]
    listed = list_tools(run_cli)
    assert {"bash", EDITOR} <= listed.keys()


@pytest.mark.parametrize(
    ("flags", "code"),
    [([], 4), (["--allow", "run_shell(touch *)"], 0)],
    ids=["denied", "run_shell-rule"],
)
def test_bash_writes_follow_run_shell_rules(
    arun: Any, anthropic: ScriptedAnthropic, workspace: Path, flags: list[str], code: int
) -> None:
    anthropic.enqueue(AReply.tool_use([bash("touch made.txt", "toolu_touch")]), AReply.text("ok"))
    result = arun(*flags, "make a file")

    assert result.returncode == code, result.stderr
    [touch] = results(anthropic, 1)
    if code == 4:
        assert touch["is_error"] is True
        assert "denied" in text_of(touch).lower()
        assert not (workspace / "made.txt").exists()
        assert any("--yes" in line for line in result.stderr.splitlines())
    else:
        assert touch["is_error"] is False
        assert (workspace / "made.txt").exists()
        assert error_lines(result.stderr) == []


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_bash_runs_in_run_shells_sandbox(
    backend: str, arun: Any, anthropic: ScriptedAnthropic, cli_home: Path
) -> None:
    """Anthropic's bash is run_shell by another name: under --yes it is confined as
    run_shell is (a key in the home is not readable; the API key is not in its
    environment), and its result says which sandbox ran it."""
    config = use_backend(cli_home, backend)
    config.write_text(config.read_text() + CLIENT_TOOLS)
    key = cli_home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("private-key-material")
    anthropic.enqueue(
        AReply.tool_use([bash(f"cat {key}; env | grep -c sk-ant- || true", "toolu_cat")]),
        AReply.text("ok"),
    )
    result = arun("--yes", "show the key")

    assert result.returncode == 0, result.stderr
    [cat] = results(anthropic, 1)
    assert "private-key-material" not in text_of(cat), text_of(cat)
    assert KEY not in text_of(cat)
    assert "sandbox: workspace-write" in text_of(cat), text_of(cat)


def test_text_editor_view(arun: Any, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(
        AReply.tool_use(
            [
                editor("toolu_file", command="view", path="README.md"),
                editor("toolu_range", command="view", path="README.md", view_range=[2, 3]),
                editor("toolu_tail", command="view", path="notes.txt", view_range=[2, -1]),
                editor("toolu_dir", command="view", path="."),
            ]
        ),
        AReply.text("Viewed."),
    )
    result = arun("look around")

    assert result.returncode == 0, result.stderr  # views are reads: nothing asked
    whole, ranged, tail, directory = results(anthropic, 1)
    assert [r["is_error"] for r in (whole, ranged, tail, directory)] == [False] * 4
    assert numbered(README_LINES) in text_of(whole)
    assert f"     2\t{README_LINES[1]}\n     3\t{README_LINES[2]}" in text_of(ranged)
    assert README_LINES[0] not in text_of(ranged)
    assert f"     2\t{NOTES_LINES[1]}" in text_of(tail)
    assert NOTES_LINES[0] not in text_of(tail)
    assert "README.md" in text_of(directory) and "notes.txt" in text_of(directory)


def test_text_editor_edits_real_files(
    arun: Any, anthropic: ScriptedAnthropic, workspace: Path
) -> None:
    (workspace / "crlf.txt").write_bytes(b"first\r\nsecond\r\n")
    anthropic.enqueue(
        AReply.tool_use(
            [editor("t_create", command="create", path="new.txt", file_text="one\ntwo\ntwo\n")]
        ),
        AReply.tool_use(
            [editor("t_replace", command="str_replace", path="new.txt", old_str="one", new_str="1")]
        ),
        AReply.tool_use(
            [editor("t_nomatch", command="str_replace", path="new.txt", old_str="zzz", new_str="")]
        ),
        AReply.tool_use(
            [editor("t_many", command="str_replace", path="new.txt", old_str="two", new_str="2")]
        ),
        AReply.tool_use(
            [editor("t_insert", command="insert", path="crlf.txt", insert_line=1, new_str="mid")]
        ),
        AReply.tool_use([editor("t_undo", command="undo_edit", path="new.txt")]),
        AReply.text("Edited."),
    )
    result = arun("--yes", "edit things")

    assert result.returncode == 0, result.stderr
    assert len(anthropic.requests) == 7
    [create] = results(anthropic, 1)
    [replace] = results(anthropic, 2)
    [nomatch] = results(anthropic, 3)
    [many] = results(anthropic, 4)
    [insert] = results(anthropic, 5)
    [undo] = results(anthropic, 6)

    assert create["is_error"] is False
    assert replace["is_error"] is False
    assert nomatch["is_error"] is True
    assert "not found" in text_of(nomatch) and "new.txt" in text_of(nomatch)
    assert many["is_error"] is True
    assert "2 times" in text_of(many)
    assert insert["is_error"] is False
    assert undo["is_error"] is True
    assert "undo_edit" in text_of(undo) and "not supported" in text_of(undo)

    assert (workspace / "new.txt").read_bytes() == b"1\ntwo\ntwo\n"
    assert (workspace / "crlf.txt").read_bytes() == b"first\r\nmid\r\nsecond\r\n"


def test_text_editor_outside_the_workspace_is_denied(
    arun: Any, anthropic: ScriptedAnthropic, tmp_path: Path
) -> None:
    anthropic.enqueue(
        AReply.tool_use(
            [
                editor("t_view", command="view", path="../outside.txt"),
                editor("t_create", command="create", path="../evil.txt", file_text="x"),
            ]
        ),
        AReply.text("Could not."),
    )
    result = arun("read outside")

    assert result.returncode == 4, result.stderr
    view, create = results(anthropic, 1)
    assert view["is_error"] is True and create["is_error"] is True
    assert "denied" in text_of(view).lower()
    assert OUTSIDE_LINES[0] not in text_of(view)
    assert not (tmp_path / "evil.txt").exists()
