"""macOS: the Seatbelt profile for a layout, for `sandbox-exec -p PROFILE` (as Codex and
Claude Code do). Reads and writes are denied but where the layout allows them; protected
paths stay read-only inside the writable workspace; no network unless the profile has it."""

from __future__ import annotations

from agentcli.sandbox.layout import Layout


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(layout: Layout) -> str:
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
        '(allow file-read-metadata (literal "/"))',
        "(allow file-read*",
        *(
            f"  (subpath {_quote(p)})"
            for p in ("/System", "/Library", "/private/etc", "/private/var/db", *layout.read)
        ),
        ")",
        '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero")'
        ' (literal "/dev/urandom") (literal "/dev/random"))',
    ]
    if layout.write:
        protected = " ".join(f"(subpath {_quote(p)})" for p in layout.protected)
        exclude = f" (require-not (require-any {protected}))" if protected else ""
        for path in layout.write:
            lines.append(f"(allow file-write* (require-all (subpath {_quote(path)}){exclude}))")
    if layout.network:
        lines.append("(allow network-outbound network-inbound network-bind)")
        lines.append("(allow system-socket)")
    return "\n".join(lines) + "\n"


def seatbelt_argv(sandbox_exec: str, layout: Layout) -> list[str]:
    return [sandbox_exec, "-p", seatbelt_profile(layout), "--"]
