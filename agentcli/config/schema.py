"""The settings agentcli knows: their types, defaults, and which ones an untrusted project
file may not set (they loosen the policy, run code, or redirect requests and keys)."""

from __future__ import annotations

from typing import Any

from agentcli.records import dataclass


@dataclass(frozen=True, slots=True)
class Setting:
    key: str
    kind: type | tuple[type, ...]
    default: Any
    help: str
    dangerous: bool = False  # ignored in a project file until the workspace is trusted
    minimum: float | None = None  # numbers: the range a value must fall in
    maximum: float | None = None


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        # The model picks the provider, its endpoint and key: where the conversation goes.
        Setting("model", str, None, "default PROVIDER:MODEL (or PROVIDER:ALIAS)", True),
        Setting("max_steps", int, 20, "most model steps in one run", minimum=1, maximum=100_000),
        Setting(
            "timeout",
            (int, float),
            None,
            "wall-clock limit of a run, in seconds",
            minimum=0.001,
            maximum=1e7,
        ),
        Setting("policy.allow", list, [], "rules that allow calls without asking", True),
        Setting("policy.ask", list, [], "rules that always ask"),
        Setting("policy.deny", list, [], "rules that always deny"),
        Setting("policy.yes", bool, False, "approve every call that would ask", True),
        Setting("tools.concurrency", int, 8, "tool calls run at once", minimum=1, maximum=256),
        Setting(
            "agents.max_depth",
            int,
            1,
            "how deep subagents may nest (0: no task tool; 1: a subagent starts none)",
            minimum=0,
            maximum=3,
        ),
        Setting(
            "tools.max_invalid_calls",
            int,
            3,
            "invalid calls in a row before a run stops",
            minimum=1,
            maximum=1000,
        ),
        Setting(
            "shell.output_limit",
            int,
            30_000,
            "characters of command output the model gets",
            minimum=100,
            maximum=100_000_000,
        ),
        Setting(
            "limits.tool_arguments",
            int,
            2_000_000,
            "characters of one tool call's arguments read from the model",
            minimum=1_000,
            maximum=1_000_000_000,
        ),
        Setting(
            "limits.text_message",
            int,
            2_000_000,
            "characters of one answer (or reasoning) read from the model",
            minimum=1_000,
            maximum=1_000_000_000,
        ),
        Setting(
            "limits.state",
            int,
            4_194_304,
            "bytes of a served thread's state (JSON): a patch past it is refused",
            minimum=1_000,
            maximum=1_000_000_000,
        ),
        # The defaults of agentcli.conversation.images, written out so that `--help` does
        # not import it (a test keeps them the same).
        Setting(
            "images.max_bytes",
            int,
            3_932_160,
            "bytes of one image a model may get (larger: its description)",
            minimum=1,
            maximum=1_000_000_000,
        ),
        Setting(
            "images.max_per_request",
            int,
            20,
            "images sent in one request, the latest (0: none)",
            minimum=0,
            maximum=10_000,
        ),
        # Where `agentcli serve` keeps its threads: a PostgreSQL URL (replicas share it;
        # agentcli.sessions.postgres) or none (the JSONL sessions directory).
        Setting("serve.store", str, None, "serve's thread store: postgresql://USER@HOST/DB", True),
        Setting(
            "serve.lease_seconds",
            (int, float),
            5,
            "how long a replica's claim on a running thread lasts unrenewed (s)",
            minimum=0.5,
            maximum=3600,
        ),
        Setting("shell.env", list, [], "extra environment variables commands may see", True),
        Setting("shell.python", str, None, "interpreter for run_python (default: PATH)", True),
        Setting("instructions.files", list, ["AGENTS.md"], "project instruction file names"),
        Setting(
            "context.window",
            int,
            128_000,
            "context window in tokens (default for all)",
            minimum=100,
            maximum=100_000_000,
        ),
        Setting(
            "context.threshold",
            (int, float),
            0.8,
            "compact when this share of the window is used",
            minimum=0.05,
            maximum=1,
        ),
        Setting(
            "context.keep_turns",
            int,
            2,
            "latest user turns kept verbatim in compaction",
            minimum=0,
            maximum=1000,
        ),
        Setting(
            "requests.first_byte_timeout",
            (int, float),
            90,
            "first-byte timeout (s)",
            minimum=0.1,
            maximum=86_400,
        ),
        Setting(
            "requests.max_wait",
            (int, float),
            300,
            "seconds to wait for an answer to begin",
            minimum=0.1,
            maximum=86_400,
        ),
        Setting(
            "sessions.lock_wait",
            (int, float),
            5,
            "seconds to wait for a session in use",
            minimum=0,
            maximum=3600,
        ),
        Setting(
            "checkpoints.max_bytes",
            int,
            200_000_000,
            "bytes of file contents kept for /rewind (0: no checkpoints)",
            minimum=0,
            maximum=1 << 50,
        ),
        Setting(
            "checkpoints.max_file_bytes",
            int,
            2_000_000,
            "a larger file is checkpointed by size and time only",
            minimum=0,
            maximum=1 << 40,
        ),
        Setting("repl.vi_mode", bool, False, "vi key bindings in the chat prompt"),
        Setting("sandbox.mode", str, "auto", "auto (confine commands) or off", True),
        Setting("sandbox.network", bool, False, "--yes may grant commands the network", True),
        Setting("sandbox.read", list, [], "extra paths sandboxed commands may read", True),
        Setting("sandbox.write", list, [], "extra paths sandboxed commands may write", True),
        Setting(
            "sandbox.add_dirs",
            list,
            [],
            "directories every tool may also reach: DIR (read-write) or DIR:ro",
            True,
        ),
        Setting("sandbox.backend", str, "auto", "auto, bubblewrap, landlock or seatbelt", True),
        Setting("web_search.backend", str, None, "searxng or brave", True),
        Setting("web_search.url", str, None, "the search backend's URL", True),
        Setting("web_search.api_key_env", str, None, "variable holding its key", True),
    ]
}

# Tables whose every key is dangerous in an untrusted project file.
# (`tools.NAME` tables define command tools: they run programs.)
DANGEROUS_TABLES = ("providers", "mcp", "hooks", "tools")
# Tables of free-form keys (no schema per key).
OPEN_TABLES = ("providers", "mcp", "hooks", "tools", "context.windows")


def is_dangerous(key: str) -> bool:
    setting = SETTINGS.get(key)
    if setting is not None:
        return setting.dangerous
    return any(key == t or key.startswith(t + ".") for t in DANGEROUS_TABLES)


def is_known(key: str) -> bool:
    return key in SETTINGS or any(key.startswith(t + ".") for t in OPEN_TABLES)


def did_you_mean(key: str) -> str:
    """` (did you mean 'max_steps'?)` for an unknown key close to a known one, else ``."""
    import difflib

    names = [*SETTINGS, *(f"{table}.NAME" for table in OPEN_TABLES)]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_type(key: str, value: Any) -> str | None:
    """What is wrong with `value` for `key`, or None."""
    when = _date_problem(key, value)
    if when is not None:
        return when
    setting = SETTINGS.get(key)
    if setting is None:
        return _open_table_problem(key, value)
    kinds = setting.kind if isinstance(setting.kind, tuple) else (setting.kind,)
    if isinstance(value, bool) and bool not in kinds:
        return f"{key} must be {_names(kinds)}, not a boolean"
    if not isinstance(value, kinds):
        return f"{key} must be {_names(kinds)}, not {type(value).__name__} {value!r}"
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        return f"{key} must be a list of strings"
    if key == "instructions.files":
        return _instruction_names_problem(value)
    if isinstance(value, (int, float)):
        return range_problem(key, value, setting.minimum, setting.maximum)
    return None


# A table written as one value (`hooks = 5`): what the table is written as instead.
_TABLE_FORMS = {
    "providers": "[providers.NAME] tables",
    "mcp": "[mcp.servers.NAME] tables",
    "hooks": "arrays of tables: [[hooks.PreToolUse]] with matcher and command",
    "tools": "[tools.NAME] tables",
    "context.windows": 'a table: [context.windows] "PROVIDER:MODEL" = TOKENS',
}
# What agentcli itself reads of every [providers.NAME] table (a provider reads the rest).
_PROVIDER_TEXT = ("type", "base_url", "api_key_env", "model")


def _date_problem(key: str, value: Any) -> str | None:
    """No setting is a date or a time: TOML's unquoted `1979-05-27` is one, anywhere."""
    import datetime

    if isinstance(value, (datetime.date, datetime.time)):
        return f"{key} is a TOML date or time ({value}), which no setting takes; quote it"
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((p for p in (_date_problem(key, item) for item in inner) if p), None)


def _open_table_problem(key: str, value: Any) -> str | None:
    """A free-form table's values agentcli reads itself: a table where one must be, the
    provider's own keys as text, a window as a number of tokens."""
    if key in _TABLE_FORMS and not isinstance(value, dict):
        return f"{key} must be written as {_TABLE_FORMS[key]}, not {_kind(value)}"
    parts = key.split(".")
    if parts[0] == "providers" and len(parts) >= 2:
        return _provider_problem(key, parts[2:], value)
    if key.startswith("context.windows."):
        return _window_problem(key, value)
    return None


def _provider_problem(key: str, rest: list[str], value: Any) -> str | None:
    if not rest and not isinstance(value, dict):
        return f"{key} must be a table ([{key}]), not {_kind(value)}"
    if rest == ["models"]:
        return None if isinstance(value, dict) else f"{key} must be a table of alias = model name"
    if len(rest) > 1 and rest[0] in _PROVIDER_TEXT:  # a table there, flattened past it
        name = key.rsplit(".", len(rest) - 1)[0]
        return f"{name} must be a string, not a table"
    if not (len(rest) == 1 and rest[0] in _PROVIDER_TEXT) and rest[:1] != ["models"]:
        return None  # the provider's own options: it checks them
    if not isinstance(value, str):
        return f"{key} must be a string, not {_kind(value)}"
    if rest == ["api_key_env"] and (not value or "=" in value or _has_control(value)):
        return f"{key} must name an environment variable (like WORK_API_KEY), not {value!r}"
    if (rest == ["model"] or rest[:1] == ["models"]) and _has_control(value):
        return model_name_problem(value, key)
    return None


def _window_problem(key: str, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{key} must be a number of tokens (an integer), not {_kind(value)}"
    limits = SETTINGS["context.window"]
    return range_problem(key, value, limits.minimum, limits.maximum)


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


def model_name_problem(name: str, where: str) -> str | None:
    """A model's name holds no control character: in a request, a session's header and
    every status line one would only be an escape sequence from a file or a variable.
    `where` says where the name was set."""
    if not _has_control(name):
        return None
    return (
        f"the model {name!r} ({where}) holds a control character, which no model's name "
        "does; check how it was set"
    )


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    return {list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def range_problem(name: str, value: float, low: float | None, high: float | None) -> str | None:
    """What is wrong with a number read from configuration or a flag, or None: it must be
    finite (no NaN or infinity) and within [low, high]."""
    if value != value or value in (float("inf"), float("-inf")):
        return f"{name} must be a finite number, not {value}"
    if low is not None and value < low:
        return f"{name} must be at least {low:g}, not {value:g}"
    if high is not None and value > high:
        return f"{name} must be at most {high:g}, not {value:g}"
    return None


def _instruction_names_problem(names: list[str]) -> str | None:
    """Instruction files are files of the workspace: relative names, never climbing out."""
    from pathlib import PurePath

    for name in names:
        path = PurePath(name)
        if not name or path.is_absolute() or name.startswith("~") or ".." in path.parts:
            return (
                f"instructions.files must name files inside the workspace (like AGENTS.md), "
                f"not {name!r}"
            )
    return None


def _names(kinds: tuple[type, ...]) -> str:
    words = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
    }
    return " or ".join(words.get(k, k.__name__) for k in kinds)
