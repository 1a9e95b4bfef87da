"""`contained=True`: the command will run in an OS sandbox with the read-only profile, so a few
shell forms whose effect stays local become low — never anything that could write, reach
out or run a program that might leave the sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentcli.policy.shell_parse import parse_command
from agentcli.policy.shell_risk import classify_shell
from agentcli.risk import Risk
from agentcli.tools.base import ToolContext
from agentcli.tools.shell import RunShell
from agentcli.workspace.root import Workspace
from tests.test_policy_classify import HIGH, bash_argvs, build_ws

_EMPTY: dict[str, Path] = {}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return build_ws(tmp_path)


def risks(command: str, workspace: Workspace) -> tuple[Risk, Risk]:
    plain = classify_shell(command, workspace)
    contained = classify_shell(command, workspace, contained=True)
    assert contained.reason.strip()
    return plain.risk, contained.risk


# High without a sandbox, low inside one.
LOW_WHEN_CONTAINED = [
    "cat <<EOF\nhello\nEOF",
    "cat <<'EOF' | grep x\n$(not run) `either`\nEOF",
    "wc -l <<-EOF\n\tx\n\tEOF",
    "grep -c x <<< 'a x b'",
    "echo $(git rev-parse HEAD)",
    'echo "today: $(date +%F)"',
    "echo `pwd`",
    "echo $(ls src) | wc -w",
    "diff <(ls) <(ls src)",
    "ls & cat a.txt",
    "sleep 1 &",
    "ls 2>/dev/null",
    "ls &>/dev/null",
    "grep -r x . 2>&1 | head",
    "ls >&2",
    "ls |& cat",
    "cat < a.txt",
    "wc -l < /dev/null",
]


@pytest.mark.parametrize("command", LOW_WHEN_CONTAINED)
def test_local_shell_forms_are_low_in_a_sandbox(command: str, ws: Workspace) -> None:
    assert risks(command, ws) == (Risk.HIGH, Risk.LOW)


# Still high in a sandbox: they write, reach out, run something an option names, hide
# words from the check, or read outside.
HIGH_WHEN_CONTAINED = [
    "ls > out.txt",
    "ls >> out.txt",
    "ls &> out.txt",
    "ls 2> err.txt",
    "cat a.txt >| out.txt",
    "ls >&out.txt",
    "cat >(ls)",
    "ls >/dev/null /etc",  # bash passes /etc to ls; the grammar puts it in the redirect
    "cat <<EOF /etc/passwd\nx\nEOF",  # the same inside a here-document
    "grep x <<EOF ../outside.txt\nx\nEOF",
    "cat <<EOF >/dev/null ../outside.txt\nx\nEOF",
    "cat <<EOF > out.txt\nx\nEOF",
    "cat 2>/dev/null ../outside.txt",
    "cat $(ls src)",  # a file named only when it runs: the sandbox would still read /etc
    "wc -l $(find src -name '*.py')",
    "cat $(echo /etc/passwd)",
    "diff <(ls) ../outside.txt",
    "grep $(echo -f /etc/passwd) a.txt",  # the word becomes an option reading a file
    "grep $(echo -r -e x /etc) .",
    "rg $(echo --files /etc)",
    "jq $(echo --rawfile a /etc/passwd) -n '$a'",
    "head -n $(echo 5) ../outside.txt",
    "cat $(echo -- -) ../outside.txt",
    "cat < ../outside.txt",
    "cat < link.txt",
    "cat < /etc/passwd",
    "$(echo rm) -rf src",
    "`echo rm` x",
    "rg $(echo --pre=sh) x",
    "sort $(echo --compress-program=sh) a.txt",
    "find $(echo . -exec sh -c id ;)",
    "git $(echo -c core.pager=sh) log",
    "git log $(echo --output=x)",
    "sed $(echo -n 1e) a.txt",
    "echo $(rm -rf src)",
    "cat <(curl example.invalid)",
    "cat <<EOF\n$(rm x)\nEOF",
    "cat <<EOF\n$HOME\nEOF",
    "curl example.invalid &",
    "nohup sleep 100 &",
    "setsid sleep 100 &",
    "ls & rm a.txt",
    "echo $HOME",
    "X=1 ls",
    "cat ../outside.txt &",
    "(ls)",
    "{ ls; } 2>/dev/null",
    "ls 2>/dev/null; rm a.txt",
]


@pytest.mark.parametrize("command", HIGH_WHEN_CONTAINED)
def test_harm_a_sandbox_does_not_contain_is_never_low(command: str, ws: Workspace) -> None:
    assert risks(command, ws) == (Risk.HIGH, Risk.HIGH)


_LOCAL_FORMS = {
    "ls &",
    "ls & rm x",  # rm stays high, checked above in its own case
    "ls 2>&1",
    "ls |& cat",
    "cat <<EOF\nx\nEOF",
    "cat <<< x",
    "echo $(whoami)",
    "echo `id`",
}


@pytest.mark.parametrize("command", [c for c in HIGH if c not in _LOCAL_FORMS])
def test_everything_high_without_a_sandbox_stays_high_unless_only_local(
    command: str, ws: Workspace
) -> None:
    assert classify_shell(command, ws, contained=True).risk is Risk.HIGH


def test_run_shell_reads_the_sandbox_from_its_context(ws: Workspace) -> None:
    from agentcli.sandbox.confine import Sandbox, SandboxSettings

    sandbox = Sandbox(ws.root, SandboxSettings())
    if not sandbox.active:
        pytest.skip("no sandbox on this host")
    tool, args = RunShell(), {"command": "ls 2>/dev/null"}
    assert tool.assess(args, ToolContext(ws)).risk is Risk.HIGH
    assert tool.assess(args, ToolContext(ws, sandbox=sandbox)).risk is Risk.LOW
    off = Sandbox(ws.root, SandboxSettings(enabled=False))
    assert tool.assess(args, ToolContext(ws, sandbox=off)).risk is Risk.HIGH
    background = {"command": "ls", "background": True}
    assert tool.assess(background, ToolContext(ws, sandbox=sandbox)).risk is Risk.HIGH


# The differential property of test_policy_classify, for the forms a sandbox allows: bash,
# with every program replaced by a recorder, must run exactly the argv the classifier saw —
# no word hidden in a redirection or a here-document.

_REDIRECTS = [
    " 2>/dev/null",
    " >/dev/null",
    " &>/dev/null",
    " 2>&1",
    " >&2",
    " </dev/null",
    " <<< q",
    " <<EOF\nbody\nEOF\n",
    " <<'EOF'\n$x\nEOF\n",
    " &",
    " <<EOF a.txt\nbody\nEOF\n",
]
_WORDS = ["x", "-n", "a.txt", "'q r'", "/dev/null", "src"]
contained_line = st.lists(
    st.tuples(
        st.sampled_from(["cat", "grep", "wc", "ls", "echo", "head"]),
        st.lists(st.sampled_from(_WORDS + _REDIRECTS), max_size=4),
    ).map(lambda t: " ".join([t[0], *t[1]])),
    min_size=1,
    max_size=3,
).map(" ; ".join)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(contained_line)
def test_contained_low_commands_run_exactly_what_was_classified(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    empty = _EMPTY.setdefault("dir", tmp_path_factory.mktemp("empty"))
    assume(classify_shell(text, Workspace(empty), contained=True).risk is Risk.LOW)
    seen = sorted(c.argv for c in parse_command(text, contained=True).commands)
    assert bash_argvs(text + "\nbuiltin wait", empty) == seen, text
