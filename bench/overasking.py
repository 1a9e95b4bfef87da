"""How often agentcli asks for commands other agent shells run without asking.

Rates every command of tests/data/peer_commands.tsv (commands from Codex's is_safe_command
tests and the read-only lists of Claude Code and Gemini CLI, with their verdicts) in a small
git repository, without a sandbox and with `contained=True` (a read-only OS sandbox), and
prints the share of the peers' safe commands that would ask, by kind, and how many harmful
commands would run without asking (must be 0). It also prints how many of the safe commands
a deny rule for another program (`--forbid 'run_shell(rm *)'`, under --yes) refuses: a deny
rule wins wherever a command may run any program, and this says what that costs.

    python bench/overasking.py                 # this checkout
    python bench/overasking.py --source DIR    # another checkout (say, before a change)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="import agentcli from this checkout")
    parser.add_argument("--list", action="store_true", help="print each command that asks")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.peer_corpus import build_workspace, load_corpus

    if options.source:
        sys.path.insert(0, str(options.source.resolve()))
    import agentcli
    from agentcli.policy.shell_risk import classify_shell
    from agentcli.risk import Risk
    from agentcli.workspace.root import Workspace

    print(f"agentcli from {Path(agentcli.__file__).parent.parent}")

    cases = load_corpus()
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace(build_workspace(Path(scratch)))

        def rate(command: str, contained: bool, hidden: bool = False) -> Risk | None:
            """`hidden`: the sandbox gives commands a process list of their own
            (bubblewrap's PID namespace), so `ps` shows only theirs."""
            try:
                if contained and hidden:
                    visible = lambda: False  # noqa: E731
                    return classify_shell(
                        command, workspace, contained=True, processes_visible=visible
                    ).risk
                if contained:
                    return classify_shell(command, workspace, contained=True).risk
                return classify_shell(command, workspace).risk
            except TypeError:
                return None  # a checkout without `contained` or `processes_visible`

        rows = [
            (
                case,
                rate(case.command, False),
                rate(case.command, True, hidden=True),
                rate(case.command, True),
            )
            for case in cases
        ]
        refused = [
            c.command
            for c in cases
            if c.verdict == "safe" and _denied_by_rm_rule(c.command, workspace)
        ]

    safe = [r for r in rows if r[0].verdict == "safe"]
    harmful = [r for r in rows if r[0].verdict == "harmful"]
    print(f"{len(safe)} commands the peers run without asking, {len(harmful)} harmful ones\n")
    print("asked: without a sandbox / contained by bubblewrap / contained by Landlock alone")
    print(f"{'kind':<12} {'n':>4} {'asked':>7} {'bubblewrap':>11} {'landlock':>9}")
    for kind in dict.fromkeys(r[0].kind for r in safe):
        group = [r for r in safe if r[0].kind == kind]
        print(
            f"{kind:<12} {len(group):>4} {_share(group, 1):>7} {_share(group, 2):>11} "
            f"{_share(group, 3):>9}"
        )
    print(
        f"{'all':<12} {len(safe):>4} {_share(safe, 1):>7} {_share(safe, 2):>11} "
        f"{_share(safe, 3):>9}"
    )
    for column, label in ((1, "without a sandbox"), (2, "contained"), (3, "Landlock alone")):
        low = [r[0] for r in harmful if r[column] is Risk.LOW]
        print(f"harmful commands rated low {label}: {len(low)}")
        for case in low:
            print(f"  {case.kind}: {case.command!r}")
    print(
        f"\nsafe commands refused by --forbid 'run_shell(rm *)' under --yes: {len(refused)} of "
        f"{len(safe)} ({100 * len(refused) / len(safe):.1f}%)"
    )
    if options.list:
        for command in refused:
            print(f"  refused: {command!r}")
    if options.list:
        print("\nasked (without a sandbox / contained):")
        for case, plain, contained, _ in safe:
            if plain is not Risk.LOW:
                mark = "asks" if contained is not Risk.LOW else "low when contained"
                print(f"  {case.kind}: {case.command!r} ({mark})")


def _denied_by_rm_rule(command: str, workspace: object) -> bool:
    """What `agentcli run --yes --forbid 'run_shell(rm *)'` decides for the command."""
    from agentcli.policy.engine import Policy
    from agentcli.policy.rules import RuleSet, parse_rule
    from agentcli.risk import ApprovalRequest
    from agentcli.tools.base import ToolContext
    from agentcli.tools.shell import RunShell

    tool, args = RunShell(), {"command": command}
    context = ToolContext(workspace=workspace)
    request = ApprovalRequest(
        "run_shell", args, tool.assess(args, context), None, tool.rule_subjects(args, context)
    )
    rules = RuleSet(deny=[parse_rule("run_shell(rm *)", "bench")])
    return Policy(rules=rules, yes=True, workspace=workspace).explain(request).decision == "deny"


def _share(rows: list, column: int) -> str:
    values = [r[column] for r in rows]
    if any(v is None for v in values):
        return "n/a"
    asked = sum(1 for v in values if v.label != "low")
    return f"{100 * asked / len(values):.0f}%"


if __name__ == "__main__":
    main()
