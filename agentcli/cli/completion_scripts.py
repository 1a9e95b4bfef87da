"""Static shell completion scripts (bash, zsh, fish), generated from the click command tree
that Typer builds. Static on purpose: TAB never starts Python, so it is instant.

Imported only by `agentcli completions`; it needs nothing beyond the command object it is
given (Typer's vendored click or click itself: only attributes both have are read)."""

from __future__ import annotations

from typing import Any

from agentcli.records import dataclass

SHELLS = ("bash", "zsh", "fish")
_FILES = {"bash": "agentcli.bash", "zsh": "_agentcli", "fish": "agentcli.fish"}
_INSTALL = {
    "bash": "source it from ~/.bashrc, or copy it to "
    "~/.local/share/bash-completion/completions/agentcli",
    "zsh": "copy it as _agentcli into a directory on $fpath (before compinit), or source it",
    "fish": "copy it to ~/.config/fish/completions/agentcli.fish",
}


@dataclass(frozen=True)
class Value:
    """What a parameter's value completes to: fixed words, directories, files, or nothing."""

    choices: tuple[str, ...] = ()
    path: str | None = None  # "dir" or "file"


@dataclass(frozen=True)
class Param:
    names: tuple[str, ...]  # options: "--long" first, then short; arguments: the name
    help: str
    takes_value: bool
    value: Value
    is_option: bool
    exits: bool = False  # an eager flag such as --help/--version: nothing may follow it
    required: bool = False


@dataclass(frozen=True)
class Command:
    name: str  # "" for the program itself
    help: str
    params: tuple[Param, ...]

    @property
    def options(self) -> list[Param]:
        return [p for p in self.params if p.is_option]

    @property
    def arguments(self) -> list[Param]:
        return [p for p in self.params if not p.is_option]


def _value_hints() -> dict[str, Value]:
    # cli.py types these as plain `str` (validated later, in settings), so the click model
    # cannot show their values; they are supplied here, keyed by parameter name.
    from typing import get_args

    from agentcli.settings import OutputFormat

    return {
        "output": Value(choices=get_args(OutputFormat)),
        "cwd": Value(path="dir"),
        "shell": Value(choices=SHELLS),
    }


def _declared_value(param: Any) -> Value:
    """Choices or a path kind declared in the parameter's type, if any."""
    described = getattr(param, "type_descriptor", None)  # Typer's vendored click
    if described is not None:
        if described.choices:
            return Value(choices=tuple(str(getattr(c, "value", c)) for c in described.choices))
        if described.is_file:
            return Value(path="file")
        if described.is_path:
            return Value(path="dir" if described.path_type == "dir" else "file")
        return Value()
    kind = getattr(param, "type", None)  # click itself: Choice, Path, File
    if getattr(kind, "choices", None):
        return Value(choices=tuple(str(getattr(c, "value", c)) for c in kind.choices))
    name = getattr(kind, "name", "")
    if name in ("directory", "path", "file", "filename"):
        return Value(path="dir" if name == "directory" else "file")
    return Value()


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _param(param: Any, hints: dict[str, Value]) -> Param:
    is_option = getattr(param, "param_type_name", "") == "option"
    value = _declared_value(param)
    if value == Value():
        value = hints.get(param.name, value)
    flag = is_option and (getattr(param, "is_flag", False) or getattr(param, "count", False))
    names = [*param.opts, *param.secondary_opts] if is_option else [param.name]
    # Sorted because click builds the help option's names from a set: keep output stable.
    names.sort(key=lambda n: (not n.startswith("--"), n))
    return Param(
        names=tuple(names),
        help=_one_line(getattr(param, "help", None)),
        takes_value=not flag,
        value=value,
        is_option=is_option,
        exits=flag and param.is_eager,
        required=bool(param.required),
    )


def _command(command: Any, name: str, parent_ctx: Any, hints: dict[str, Value]) -> Command:
    # A context is needed for get_params(), the only way to see the implicit --help option.
    ctx = command.context_class(
        command, parent=parent_ctx, info_name=name or "agentcli", **command.context_settings
    )
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    summary = _one_line(command.help).partition(". ")[0].removesuffix(".")
    return Command(name=name, help=summary, params=tuple(_param(p, hints) for p in params))


def describe(group: Any) -> list[Command]:
    """The program (name "") followed by its visible subcommands, in definition order."""
    hints = _value_hints()
    root = _command(group, "", None, hints)
    root_ctx = group.context_class(group, info_name="agentcli", **group.context_settings)
    subs = [
        _command(sub, name, root_ctx, hints)
        for name, sub in group.commands.items()
        if not getattr(sub, "hidden", False)
    ]
    return [root, *subs]


def render(command: Any, shell: str) -> str:
    """The completion script for `shell` (one of SHELLS) of the click group `command`."""
    if shell not in SHELLS:
        raise ValueError(f"no completion script for {shell!r}")
    commands = describe(command)
    header = (
        f"# {shell} completion for agentcli. GENERATED by `agentcli completions {shell}`:"
        " do not edit.\n"
        f"# Regenerate: agentcli completions {shell} > completions/{_FILES[shell]}\n"
        f"# Install: {_INSTALL[shell]}.\n"
    )
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](commands, header)


# --- bash ---


def _bash_action(value: Value) -> str:
    if value.choices:
        return f'_agentcli_words "{" ".join(value.choices)}"'
    if value.path:
        return "_agentcli_paths -d" if value.path == "dir" else "_agentcli_paths -f"
    return ":"  # a free value: nothing to offer


def _all_names(options: list[Param]) -> list[str]:
    return [name for option in options for name in option.names]


def _bash(commands: list[Command], header: str) -> str:
    subs = commands[1:]
    valued = [(c.name, o) for c in commands for o in c.options if o.takes_value]
    takes_value = "|".join(f"{c}:{n}" for c, o in valued for n in o.names) or "__none__"
    # One case branch per action, e.g. every option with a free value shares ":".
    by_action: dict[str, list[str]] = {}
    for c, o in valued:
        by_action.setdefault(_bash_action(o.value), []).extend(f"{c}:{n}" for n in o.names)
    value_cases = "".join(
        f"        {'|'.join(patterns)})\n            {action}; return 0 ;;\n"
        for action, patterns in by_action.items()
    )
    option_cases = "".join(
        f'            "{c.name}") _agentcli_words "{" ".join(_all_names(c.options))}" ;;\n'
        for c in commands
    )
    argument_cases = "".join(
        f"        {c.name}:{i}) {_bash_action(a.value)} ;;\n"
        for c in subs
        for i, a in enumerate(c.arguments)
        if a.value != Value()
    )
    sub_names = " ".join(c.name for c in subs)
    return f"""{header}
_agentcli_words() {{
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}}

_agentcli_paths() {{
    compopt -o filenames 2>/dev/null
    local IFS=$'\\n'
    COMPREPLY=($(compgen "$1" -- "$cur"))
}}

_agentcli() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" cmd="" npos=0 i word
    COMPREPLY=()
    (( COMP_CWORD > 0 )) && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    # bash splits `--opt=value` at "=": complete the value of the option before it.
    if [[ $cur == "=" ]]; then
        cur=""
    elif [[ $prev == "=" ]] && (( COMP_CWORD > 1 )); then
        prev="${{COMP_WORDS[COMP_CWORD-2]}}"
    fi
    # Find the subcommand and count its positional arguments, skipping option values.
    for (( i = 1; i < COMP_CWORD; i++ )); do
        word="${{COMP_WORDS[i]}}"
        case "$cmd:$word" in
            {takes_value})
                i=$((i + 1))
                [[ ${{COMP_WORDS[i]}} == "=" ]] && i=$((i + 1))
                ;;
            *:-*) ;;
            :*) cmd="$word" ;;
            *) npos=$((npos + 1)) ;;
        esac
    done
    case "$cmd:$prev" in
{value_cases}    esac
    if [[ $cur == -* ]]; then
        case "$cmd" in
{option_cases}        esac
        return 0
    fi
    if [[ -z $cmd ]]; then
        _agentcli_words "{sub_names}"
        return 0
    fi
    case "$cmd:$npos" in
{argument_cases}    esac
    return 0
}}

complete -F _agentcli agentcli
"""


# --- zsh ---


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh_bracketed(text: str) -> str:
    """An _arguments description: brackets and backslashes escaped."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _zsh_action(param: Param) -> str:
    message = param.names[0].lstrip("-").replace(":", "\\:")
    if param.value.choices:
        return f"{message}:({' '.join(param.value.choices)})"
    if param.value.path:
        return f"{message}:_files" + (" -/" if param.value.path == "dir" else "")
    return f"{message}: "


def _zsh_specs(command: Command) -> list[str]:
    specs = []
    for option in command.options:
        exclude = "(- *)" if option.exits else f"({' '.join(option.names)})"
        value = ":" + _zsh_action(option) if option.takes_value else ""
        text = _zsh_bracketed(option.help)
        specs += [_zsh_quote(f"{exclude}{name}[{text}]{value}") for name in option.names]
    for position, argument in enumerate(command.arguments, start=1):
        optional = "" if argument.required else ":"
        specs.append(_zsh_quote(f"{position}:{optional}{_zsh_action(argument)}"))
    return specs


def _zsh(commands: list[Command], header: str) -> str:
    root, subs = commands[0], commands[1:]
    joiner = " \\\n                    "
    root_specs = " \\\n        ".join(_zsh_specs(root))
    described = "\n".join(f"                {_zsh_quote(f'{c.name}:{c.help}')}" for c in subs)
    sub_cases = "".join(
        f"            {c.name})\n"
        f"                _arguments -s -S{joiner}{joiner.join(_zsh_specs(c))} && ret=0\n"
        "                ;;\n"
        for c in subs
    )
    return f"""#compdef agentcli
{header}
_agentcli() {{
    local curcontext="$curcontext" state line ret=1
    typeset -A opt_args
    _arguments -C -s \\
        {root_specs} \\
        '1: :->command' \\
        '*:: :->args' && ret=0
    case $state in
        command)
            local -a commands=(
{described}
            )
            _describe -t commands 'agentcli command' commands && ret=0
            ;;
        args)
            curcontext="${{curcontext%:*:*}}:agentcli-$words[1]:"
            case $words[1] in
{sub_cases}            esac
            ;;
    esac
    return ret
}}

# Autoloaded from $fpath: complete now. Sourced: register the function.
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _agentcli "$@"
else
    compdef _agentcli agentcli
fi
"""


# --- fish ---


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_value(value: Value) -> str:
    if value.choices:
        return f" -x -a {_fish_quote(' '.join(value.choices))}"
    if value.path == "dir":
        return " -x -a '(__fish_complete_directories)'"
    if value.path == "file":
        return " -r -F"
    return " -x"


def _fish_names(names: tuple[str, ...]) -> str:
    def one(name: str) -> str:
        if name.startswith("--"):
            return f"-l {name[2:]}"
        return f"-s {name[1:]}" if len(name) == 2 else f"-o {name[1:]}"

    return " ".join(one(name) for name in names)


def _fish(commands: list[Command], header: str) -> str:
    root, subs = commands[0], commands[1:]
    lines = [header, "# Nothing completes to file names unless an option asks for them.", ""]
    lines.append("complete -c agentcli -f")
    cond = "-n __fish_use_subcommand"
    for option in root.options:
        value = _fish_value(option.value) if option.takes_value else ""
        lines.append(
            f"complete -c agentcli {cond} {_fish_names(option.names)}{value}"
            f" -d {_fish_quote(option.help)}"
        )
    for sub in subs:
        lines.append(f"complete -c agentcli {cond} -a {sub.name} -d {_fish_quote(sub.help)}")
    for sub in subs:
        lines += ["", f"# agentcli {sub.name}"]
        seen = f"-n '__fish_seen_subcommand_from {sub.name}'"
        for option in sub.options:
            value = _fish_value(option.value) if option.takes_value else ""
            lines.append(
                f"complete -c agentcli {seen} {_fish_names(option.names)}{value}"
                f" -d {_fish_quote(option.help)}"
            )
        for argument in sub.arguments:
            if argument.value.choices:
                words = " ".join(argument.value.choices)
                only_once = f"'__fish_seen_subcommand_from {sub.name}; and not "
                only_once += f"__fish_seen_subcommand_from {words}'"
                lines.append(
                    f"complete -c agentcli -n {only_once} -a {_fish_quote(words)}"
                    f" -d {_fish_quote(argument.help)}"
                )
            elif argument.value.path:
                lines.append(f"complete -c agentcli {seen} -F")
    return "\n".join(lines) + "\n"
