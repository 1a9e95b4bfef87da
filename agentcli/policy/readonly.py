"""Programs that only read, and the argv rules that keep them read-only.

One readable table: each program lists the flags that would make it write, run another
program or reach the network, and examples in both directions that the tests check (as
Codex's execpolicy does). A program not in the table is never low risk; neither are
wrappers (env, xargs, timeout, nice, bash -c, eval, python -c) or network programs."""

from __future__ import annotations

import re
from collections.abc import Callable

from agentcli.policy.argv import Option, matches, parse_options
from agentcli.policy.scripts import awk_program_problem, sed_script_problem
from agentcli.policy.shell_parse import SimpleCommand
from agentcli.records import dataclass, replace

Check = Callable[[list[str]], str | None]  # argv after the program -> why it is not read-only


@dataclass(frozen=True, slots=True)
class Program:
    why: str = ""  # what it does, for explanations
    deny: frozenset[str] = frozenset()  # options that write, execute or reach out
    letters: str = ""  # more short options (bundled or not, e.g. -ni) that are denied
    globs: bool = True  # unquoted globs are safe (no option could turn dangerous)
    max_operands: int | None = None  # most non-flag arguments (uniq IN OUT writes OUT)
    check: Check | None = None
    subcommands: dict[str, Program] | None = None  # git: only these, each with its rules
    low: tuple[str, ...] = ()  # examples that must classify as low
    high: tuple[str, ...] = ()  # examples that must not
    pattern_first: bool = False  # the first operand is a pattern or script, not a path
    file_options: frozenset[str] = frozenset()  # options whose value is a file it reads
    pattern_options: frozenset[str] = frozenset()  # given one, the first operand is a path
    short_values: str = ""  # short options known to take a value (besides file options)
    long_values: frozenset[str] = frozenset()  # long options known to take a value
    bundles: bool = True  # getopt-style short options; false for find's `-name` words
    allowed: frozenset[str] = frozenset()  # for checks that allow only known options
    options_end_at_double_dash: bool = True  # false for find: its predicates follow paths
    paths: bool = True  # false when no argument names a file (echo prints its arguments)


def _script_sources(program: Program, args: list[str], code: set[str]) -> list[str] | str:
    """The program texts of sed or awk: the values of `code` options (-e), else the first
    operand; or why they cannot be checked."""
    options, operands = parse_args(program, args)
    sources: list[str] = []
    for option in options:
        if matches(option, code):
            sources.append(option.value or "")
        elif matches(option, program.file_options):
            return f"{option.name} reads the program from a file"
        elif not matches(option, program.long_values) and option.name not in program.allowed:
            return f"{option.name} is not known to be read-only"
    if not sources:
        if not operands:
            return "no program"
        sources.append(args[operands[0]])
    return sources


def _sed_check(args: list[str]) -> str | None:
    """sed scripts that only print or edit the stream: no w/W/r/R/e, no in-place editing."""
    sources = _script_sources(READ_ONLY["sed"], args, {"-e", "--expression"})
    if isinstance(sources, str):
        return f"sed: {sources}"
    return sed_script_problem("\n".join(sources))


def _awk_check(args: list[str]) -> str | None:
    """awk programs that only print: no system(), pipes, redirections, getline < file."""
    sources = _script_sources(READ_ONLY["awk"], args, {"-e", "--source"})
    if isinstance(sources, str):
        return f"awk: {sources}"
    return next(filter(None, map(awk_program_problem, sources)), None)


def _only_listing(*allowed: str, patterns: tuple[str, ...] = ()) -> Check:
    """For commands that list with no operand but create, delete or change with one; with
    one of `patterns` given (`git branch --list`), operands are patterns to list."""

    def check(args: list[str]) -> str | None:
        listing = any(a.split("=", 1)[0] in patterns for a in args)
        for arg in args:
            if arg.startswith("-"):
                if arg.split("=", 1)[0] not in allowed:
                    return f"{arg} may change something"
            elif not listing:
                return f"{arg!r} as an operand creates or changes something"
        return None

    return check


_SIGNATURES = re.compile(r"%G|%\(signature")  # format placeholders that run gpg


def _git_check(args: list[str]) -> str | None:
    """Every git subcommand: formats that verify signatures run gpg.program."""
    found = next((a for a in args if _SIGNATURES.search(a)), None)
    if found is not None:
        return f"`{found}` verifies signatures: git would run gpg"
    return None


def _git_config_check(args: list[str]) -> str | None:
    readers = {
        "--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--show-scope",
        "--global", "--local", "--system", "--name-only", "-z", "--null",
    }  # fmt: skip
    if not any(a in readers - {"--global", "--local", "--system"} for a in args):
        return "git config without --get or --list changes the configuration"
    for arg in args:
        if arg.startswith("-") and arg not in readers:
            return f"git config {arg} may change the configuration"
    return None


_DIFF_WRITERS = frozenset({"--output", "--ext-diff", "--textconv"})
# With one of these, `git branch` / `git tag` list, and their operands are patterns or
# commits (`git branch --list 'feat*'`, `git branch --contains HEAD`).
_LISTING_PATTERNS = (
    "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
)  # fmt: skip

GIT = Program(
    why="git, read-only subcommands",
    globs=False,
    subcommands={
        "status": Program(),
        "log": Program(deny=_DIFF_WRITERS),
        "show": Program(deny=_DIFF_WRITERS),
        "diff": Program(deny=_DIFF_WRITERS | {"--no-index"}),
        "blame": Program(
            deny=frozenset({"--contents"}),
            file_options=frozenset({"-S", "--ignore-revs-file"}),  # errors echo its lines
            short_values="L",
        ),
        "shortlog": Program(),
        "describe": Program(),
        "rev-parse": Program(),
        "rev-list": Program(),
        "ls-files": Program(file_options=frozenset({"-X", "--exclude-from"})),
        "ls-tree": Program(),
        "cat-file": Program(deny=frozenset({"--filters", "--textconv"})),
        "merge-base": Program(),
        "name-rev": Program(),
        "count-objects": Program(),
        "grep": Program(
            deny=frozenset({"--open-files-in-pager", "-O"}),
            pattern_first=True,
            file_options=frozenset({"-f"}),
            pattern_options=frozenset({"-e", "-f"}),
            short_values="ABCem",
        ),
        "branch": Program(
            check=_only_listing(
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-l",
                "--list",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--sort",
                "--format",
                "--color",
                "--no-color",
                "--column",
                "--no-column",
                "--ignore-case",
                "-i",
                patterns=_LISTING_PATTERNS,
            )
        ),
        "tag": Program(
            check=_only_listing(
                "-l",
                "--list",
                "-n",
                "--sort",
                "--contains",
                "--no-contains",
                "--points-at",
                "--format",
                "--merged",
                "--no-merged",
                "-i",
                "--ignore-case",
                "--column",
                "--no-column",
                patterns=_LISTING_PATTERNS,
            )
        ),
        "remote": Program(check=_only_listing("-v", "--verbose")),
        "stash": Program(
            check=lambda a: (
                None
                if a[:1] in (["list"], ["show"])
                else "only `git stash list` and `git stash show` are read-only"
            )
        ),
        "worktree": Program(
            check=lambda a: None if a[:1] == ["list"] else "only `git worktree list` is read-only"
        ),
        "reflog": Program(
            check=lambda a: (
                None
                if not a or a[0] == "show" or a[0].startswith("-")
                else "only showing the reflog is read-only"
            )
        ),
        "config": Program(check=_git_config_check),
    },
    low=(
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1 -- src",
        "git show HEAD:README.md",
        "git branch -a",
        "git --no-pager log -3",
        "git remote -v",
        "git stash list",
        "git config --get user.name",
        "git blame -L 1,5 README.md",
        "git -C src log -1",
        "git --no-optional-locks status",
        "git branch --list 'feat*'",
        "git branch --contains HEAD",
        "git tag -l 'v1.*'",
        "git grep -n /etc/passwd",
        "git log --format='%h %s'",
    ),
    high=(
        "git push origin main",
        "git commit -m x",
        "git -c core.pager=evil log",
        "git diff --output=/tmp/x",
        "git log --ext-diff",
        "git branch new-branch",
        "git tag v1",
        "git config user.name x",
        "git logout",
        "git checkout .",
        "git stash",
        "git -C /tmp status",
        "git remote add x y",
        "git fetch",
        "git -C .. status",
        "git --git-dir=../other/.git log",
        "git --work-tree=/ status",
        "git -Csrc log",
        "git log --show-signature",
        "git show --show-sig HEAD",
        "git log --format=%G?",
        "git log --pretty='%h %GS'",
        "git branch --format='%(signature)'",
        "git blame -S /etc/passwd a.txt",
        "git blame --ignore-revs-file=/etc/passwd a.txt",
        "git grep -f /etc/passwd",
        "git ls-files --exclude-from=/etc/passwd",
        "git log --outp=x",
        "git --exec-path=. status",
        "git -p log",
        "git --config-env=core.pager=X log",
        "git log -Oorder.txt",
    ),
)
GIT_GLOBAL_FLAGS = frozenset({
    "--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
})  # fmt: skip
# Global options naming where git runs: their directories must be inside the workspace
# (agentcli.policy.shell_risk checks them and reads that repository's configuration).
GIT_GLOBAL_DIRS = frozenset({"-C", "--git-dir", "--work-tree"})
# Options any git subcommand may accept (log and diff options reach many of them) that
# write a file, run a program or reach out.
GIT_ALWAYS_DENIED = frozenset({
    "--output", "--ext-diff", "--textconv", "--open-files-in-pager", "-O", "--exec",
    "--upload-pack", "--receive-pack", "--no-index", "--contents", "--show-signature",
})  # fmt: skip


def _ls_check(args: list[str]) -> str | None:
    options, _ = parse_args(READ_ONLY["ls"], args)
    names = {o.name for o in options}
    recursive = "-R" in names or any(matches(o, {"--recursive"}) for o in options)
    follows = "-L" in names or any(matches(o, {"--dereference"}) for o in options)
    if recursive and follows:
        return "`ls -R` with -L follows symbolic links out of the workspace"
    return None


def _diff_check(args: list[str]) -> str | None:
    options, _ = parse_args(READ_ONLY["diff"], args)
    recursive = any(o.name == "-r" or matches(o, {"--recursive"}) for o in options)
    if recursive and not any(matches(o, {"--no-dereference"}) for o in options):
        return "`diff -r` follows symbolic links out of the workspace (add --no-dereference)"
    return None


def _date_check(args: list[str]) -> str | None:
    _, operands = parse_args(READ_ONLY["date"], args)
    setting = next((args[i] for i in operands if not args[i].startswith("+")), None)
    return f"`date {setting}` sets the clock" if setting is not None else None


_JQ_MODULES = re.compile(r"\b(import|include|modulemeta|get_search_list)\b")


def _jq_check(args: list[str]) -> str | None:
    """jq programs can read modules and data files by name (`import "x" as $d`)."""
    for arg in args:
        if _JQ_MODULES.search(arg):
            return "a jq program that imports modules or data may read files by name"
    return None


def _ps_check(args: list[str]) -> str | None:
    """`ps e` (BSD style, no dash) and the `environ` column print every process's
    environment, keys included."""
    if any("env" in arg.lower() for arg in args):
        return "this ps format shows the environment of processes, secrets included"
    values = "oOpqtUkg"  # BSD-style letters whose value is the next word
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            if (arg[1:2] in set("oOpqtuUgGCsk") and len(arg) == 2) or arg in ("--format", "--sort"):
                skip = True
            continue
        for letter in arg:
            if letter == "e":
                return "`ps e` shows the environment of processes, secrets included"
            if letter in values:
                skip = True
                break
    return None


_AWK = Program(
    "prints fields",
    pattern_first=True,
    check=_awk_check,
    globs=False,
    pattern_options=frozenset({"-f", "--file", "-e", "--source"}),
    file_options=frozenset({"-f", "--file"}),
    short_values="Fve",
    long_values=frozenset({"--field-separator", "--assign", "--source"}),
    allowed=frozenset(
        {
            "-F",
            "-v",
            "--field-separator",
            "--assign",
            "--posix",
            "-P",
            "--traditional",
            "-c",
            "--sandbox",
            "-S",
            "-b",
            "--characters-as-bytes",
            "-n",
            "--non-decimal-data",
            "-N",
            "--use-lc-numeric",
            "-r",
            "--re-interval",
            "-M",
            "--bignum",
            "-s",
            "--no-optimize",
            "-O",
            "--optimize",
            "-t",
            "--lint-old",
        }
    ),
    low=(
        "awk '{print $1}' a.txt",
        "awk -F: '{ print $1, $NF }' a.txt",
        "awk 'NR > 1 && $3 > 100 { sum += $3 } END { print sum }' a.txt",
        "awk -v OFS=, '{ $1 = $1; print }' a.txt",
        "awk '/a|b/ { n++ } END { printf \"%d\\n\", n }' a.txt",
        "awk 'length($0) > 80' a.txt",
        "awk '{ print (a > b) }' a.txt",
        "awk 'BEGIN { x = 10 / 2; print x }'",
        "awk '{ while ((getline line) > 0) n++ }' a.txt",
    ),
    high=(
        "awk '{ system(\"id\") }' a.txt",
        "awk '{ print | \"sh\" }' a.txt",
        "awk 'BEGIN { \"id\" | getline x; print x }'",
        "awk '{ print > \"out\" }' a.txt",
        "awk '{ print $1 >> \"out\" }' a.txt",
        'awk \'{ printf("%s", $0) > "out" }\' a.txt',
        "awk 'BEGIN { while ((getline l < \"/etc/passwd\") > 0) print l }'",
        "awk 'BEGIN { ARGV[1] = \"/etc/passwd\"; ARGC = 2 } { print }'",
        "awk '@include \"x\"'",
        'awk \'BEGIN { f = "system"; @f("id") }\'',
        "awk -f prog.awk a.txt",
        "awk -i inplace '{ print }' a.txt",
        "awk --dump-variables '{ print }' a.txt",
        "awk '{ x = 1 / 2; system(\"id\"); y = 3 / 4 }' a.txt",
        "awk '{ print }' /etc/passwd",
        "awk -e '{ print |& \"sh\" }' a.txt",
        'awk \'BEGIN { print "x" > "/dev/stderr" }\'',
    ),
)

_HASH = Program(
    "hashes",
    deny=frozenset({"-c", "--check"}),  # reads the files a list names
    high=("sha256sum -c sums.txt", "md5sum -wc sums.txt", "sha1sum --ch sums.txt"),
)

GREP = Program(
    "searches text",
    pattern_first=True,
    deny=frozenset({"-R", "--dereference-recursive"}),  # follows symlinks out
    file_options=frozenset({"-f", "--file", "--exclude-from"}),
    pattern_options=frozenset({"-e", "--regexp", "-f", "--file"}),
    short_values="ABCDdem",
    long_values=frozenset(
        {
            "--after-context",
            "--before-context",
            "--context",
            "--devices",
            "--directories",
            "--regexp",
            "--max-count",
            "--label",
            "--binary-files",
            "--include",
            "--exclude",
            "--exclude-dir",
            "--group-separator",
        }
    ),
    low=(
        "grep -rn TODO .",
        "grep -c x a.txt",
        "grep -n 'a/b' src/x.py",
        "grep -A 3 x a.txt",
        "grep -e /etc/passwd a.txt",
        "grep -rl x --include=*.py .",
    ),
    high=(
        "grep -r x /etc",
        "grep -e x -r ../other",
        "grep -R x .",
        "grep -nR x .",
        "grep --dereference-r x .",
        "grep -f /etc/passwd a.txt",
        "grep -nf /etc/passwd a.txt",
        "grep -f/etc/passwd a.txt",
        "grep --fi=/etc/passwd a.txt",
        "grep --exclude-from=/etc/passwd x .",
        "grep -eroot /etc/passwd",
        "grep -ie root /etc/passwd",
        "grep --reg=root /etc/passwd",
        "grep --regexp root /etc/passwd",
        "grep -A3 x /etc/passwd",
    ),
)

READ_ONLY: dict[str, Program] = {
    "ls": Program(
        "lists files",
        check=_ls_check,
        short_values="ITw",
        low=("ls -la src", "ls *.py", "ls -R src", "ls -lL src"),
        high=("ls > out.txt", "ls -RL", "ls -LR .", "ls -lRL", "ls -R --derefer ."),
    ),
    "cat": Program(
        "prints files",
        low=("cat README.md", "cat a | head"),
        high=("cat <(curl x)", "cat ../outside.txt", "cat ~/.ssh/id_rsa"),
    ),
    "head": Program("prints the start of files", low=("head -n 20 a.py",)),
    "tail": Program("prints the end of files", low=("tail -5 log.txt",)),
    "wc": Program(
        "counts",
        deny=frozenset({"--files0-from"}),  # reads the file names from a file
        low=("wc -l *.py",),
        high=("wc --files0-from=list.txt", "wc --files0=list.txt"),
    ),
    "nl": Program("numbers lines", short_values="bdfhilnsvw"),
    "grep": GREP,
    "egrep": GREP,
    "fgrep": GREP,
    "rg": Program(
        "searches text",
        pattern_first=True,
        deny=frozenset(
            {"--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z", "-L", "--follow"}
        ),
        file_options=frozenset({"-f", "--file", "--ignore-file"}),
        pattern_options=frozenset({"-e", "--regexp", "-f", "--file", "--files", "--type-list"}),
        short_values="ABCEMTdegjmrt",
        long_values=frozenset(
            {
                "--after-context",
                "--before-context",
                "--context",
                "--regexp",
                "--glob",
                "--iglob",
                "--type",
                "--type-not",
                "--threads",
                "--max-count",
                "--max-columns",
                "--encoding",
                "--replace",
                "--max-depth",
                "--type-add",
                "--sort",
                "--sortr",
                "--colors",
                "--max-filesize",
                "--path-separator",
                "--context-separator",
            }
        ),
        low=("rg -n foo src", "rg -g '*.py' foo", "rg --files src"),
        high=(
            "rg --pre ./evil foo",
            "rg -L secret",
            "rg -nL secret",
            "rg -f /etc/passwd src",
            "rg -nf /etc/passwd src",
            "rg --files /etc",
            "rg -eroot /etc/passwd",
            "rg --ignore-file /etc/passwd x",
        ),
    ),
    "find": Program(
        "finds files",
        deny=frozenset(
            {
                "-exec",
                "-execdir",
                "-ok",
                "-okdir",
                "-delete",
                "-fprint",
                "-fprint0",
                "-fprintf",
                "-fls",
                "-L",
                "-follow",
                "-files0-from",
            }
        ),
        globs=False,
        bundles=False,
        options_end_at_double_dash=False,
        low=("find . -name '*.py'", "find src -type f -newer a.txt"),
        high=(
            "find . -exec rm {} ;",
            "find . -delete",
            "find . -fprint out",
            "find . -name *.py",
            "find -- . -delete",
            "find -L . -name x",
            "find . -follow",
            "find -files0-from list.txt",
            "find . -newer /etc/shadow",
        ),
    ),
    "sed": Program(
        "prints or edits a stream",
        pattern_first=True,
        check=_sed_check,
        globs=False,
        pattern_options=frozenset({"-e", "--expression", "-f", "--file"}),
        file_options=frozenset({"-f", "--file"}),
        short_values="el",
        long_values=frozenset({"--expression", "--line-length"}),
        allowed=frozenset(
            {
                "-n",
                "--quiet",
                "--silent",
                "-E",
                "-r",
                "--regexp-extended",
                "-s",
                "--separate",
                "-u",
                "--unbuffered",
                "-z",
                "--null-data",
                "--posix",
                "--debug",
                "--sandbox",
                "-l",
            }
        ),
        low=(
            "sed -n 1,5p a.txt",
            "sed -n '/start/,/end/p' a.txt",
            "sed 's/a/b/g' a.txt",
            "sed -E 's#/usr#/opt#; /^$/d' a.txt",
            "sed -e 1d -e '$d' a.txt",
            "sed ':a;N;$!ba;s/\\n/ /g' a.txt",
            "sed '/x/{s/a/b/;p}' a.txt",
            "sed '1i header' a.txt",
            "sed -n '/re/=' a.txt",
        ),
        high=(
            "sed -i s/a/b/ f",
            "sed -n 'w out' f",
            "sed -n 1e f",
            "sed -ni p f",
            "sed -n --expression=1p /etc/passwd",
            "sed -n --exp=1p /etc/passwd",
            "sed -ne 1p /etc/passwd",
            "sed 's/a/b/w out' f",
            "sed 's/a/id/e' f",
            "sed 'r /etc/passwd' f",
            "sed '1R /etc/passwd' f",
            "sed '/x/{W out' -e '}' f",
            "sed -f script.sed f",
            "sed --in-pl s/a/b/ f",
            "sed -n '$!{e id' -e '}' f",
            "sed 's|a|b|w out' f",
            "sed --follow-symlinks -n p f",
        ),
    ),
    "awk": _AWK,
    "gawk": _AWK,
    "mawk": _AWK,
    "nawk": _AWK,
    "sort": Program(
        "sorts",
        deny=frozenset(
            {
                "--output",
                "-o",
                "--compress-program",
                "--temporary-directory",
                "-T",
                "--files0-from",
            }
        ),
        file_options=frozenset({"--random-source"}),
        short_values="kotST",
        long_values=frozenset(
            {"--key", "--field-separator", "--buffer-size", "--parallel", "--batch-size", "--sort"}
        ),
        low=("sort -u a.txt", "sort -k 2 -t , a.txt"),
        high=(
            "sort -o out.txt in.txt",
            "sort -uo out in",
            "sort -oout in",
            "sort --outp=out in",
            "sort --o=out in",
            "sort --compress-prog=sh in",
            "sort -T /tmp in",
            "sort --files0=list in",
            "sort --random-source=/etc/passwd in",
        ),
    ),
    "uniq": Program(
        "drops repeats",
        max_operands=1,
        globs=False,  # a glob could expand into a second operand: the output file
        high=("uniq in.txt out.txt", "uniq -- a.txt -out", "uniq *.txt"),
    ),
    "cut": Program("cuts columns", short_values="bcdf", low=("cut -d / -f 2 a.txt",)),
    "tr": Program("translates characters", paths=False),
    "column": Program("formats columns", short_values="sco", low=("column -t -s / a.txt",)),
    "comm": Program("compares sorted files"),
    "diff": Program(
        "compares files",
        deny=frozenset({"--to-file", "--from-file"}),
        check=_diff_check,
        file_options=frozenset({"-X", "--exclude-from"}),
        low=("diff -u a.txt b.txt", "diff -r --no-dereference src lib"),
        high=(
            "diff -r src lib",
            "diff -ur src lib",
            "diff --recursive src lib",
            "diff -X /etc/passwd a b",
        ),
    ),
    "cmp": Program("compares files"),
    "file": Program(
        "tells file types",
        deny=frozenset({"-C", "--compile", "-f", "--files-from"}),  # -f echoes a list's lines
        file_options=frozenset({"-m", "--magic-file"}),
        high=(
            "file -Cm magic",
            "file -m /etc/magic x",
            "file -f list.txt",
            "file -bf list",
            "file -m/etc/magic x",
            "file --mag=/etc/magic x",
        ),
    ),
    "stat": Program("shows file status"),
    "du": Program(
        "shows disk usage",
        deny=frozenset({"-L", "--dereference", "--files0-from"}),
        file_options=frozenset({"-X", "--exclude-from"}),
        low=("du -sh src",),
        high=("du -L .", "du -shL .", "du --deref .", "du -X /etc/passwd .", "du --files0=l"),
    ),
    "df": Program("shows free space"),
    "tree": Program(
        "shows a tree",
        deny=frozenset({"-o", "--fromfile", "--fromtabfile", "-R", "-l", "--followlinks"}),
        globs=False,
        short_values="LPIoHT",
        low=("tree -L 2 src",),
        high=("tree -o out", "tree -oout", "tree -l", "tree -al", "tree -R", "tree --fromfile x"),
    ),
    "basename": Program("strips directories", paths=False),
    "dirname": Program("strips file names", paths=False),
    "realpath": Program("resolves paths"),
    "readlink": Program("reads links"),
    "pwd": Program("prints the directory"),
    "echo": Program(
        "prints its arguments",
        paths=False,
        low=('echo "hello world"', "echo /etc/passwd", "echo *.md"),
        high=("echo $(whoami)", "echo `id`", "echo hi > ~/.bashrc", "echo ../*", "echo /*"),
    ),
    "printf": Program("prints", deny=frozenset({"-v"}), paths=False),
    "sleep": Program("waits", paths=False, low=("sleep 1",)),
    "wait": Program("waits for background jobs", paths=False),
    "tac": Program("prints files last line first", short_values="s"),
    "rev": Program("reverses lines"),
    "paste": Program("merges lines of files", short_values="d"),
    "seq": Program("prints numbers", paths=False, low=("seq 1 10",)),
    "expr": Program("evaluates expressions", paths=False, low=("expr 1 + 2",)),
    "true": Program(),
    "false": Program(),
    "which": Program("finds programs", paths=False),
    "whoami": Program(),
    "id": Program(paths=False),
    "uname": Program(),
    "date": Program(
        "prints the date",
        deny=frozenset({"-s", "--set"}),
        file_options=frozenset({"-f", "--file", "-r", "--reference"}),  # errors echo lines
        short_values="d",  # not -I: its value is optional, attached only
        long_values=frozenset({"--date"}),
        check=_date_check,
        low=("date +%Y-%m-%d", "date -u", "date -d 'next week'", "date -r a.txt"),
        high=(
            "date -s 2020-01-01",
            "date --se=2020-01-01",
            "date 0101000070",
            "date -f /etc/passwd",
            "date -f/etc/passwd",
            "date --f=/etc/passwd",
            "date --f /etc/passwd",
            "date -ur /etc/shadow",
            "date -I 0101000070",  # -I's value is optional: the operand sets the clock
        ),
    ),
    "md5sum": _HASH,
    "sha1sum": _HASH,
    "sha256sum": _HASH,
    "sha512sum": _HASH,
    "base64": Program(
        "encodes and decodes",
        deny=frozenset({"-o", "--output"}),  # BSD base64 writes its output there
        file_options=frozenset({"--input"}),  # BSD's input file
        low=("base64 a.txt", "base64 -d a.txt", "base64 -w0 a.txt"),
        high=("base64 /etc/passwd", "base64 -o out a.txt", "base64 --input=/etc/passwd"),
    ),
    "numfmt": Program(
        "formats numbers", paths=False, low=("numfmt --to=iec 1048576", "numfmt --from=si 1K")
    ),
    "ps": Program(
        "lists processes",
        paths=False,
        check=_ps_check,
        low=("ps aux", "ps -ef", "ps -o pid,user,etime,cmd -p 1", "ps axo pid,time,comm"),
        high=(
            "ps e",
            "ps auxe",
            "ps eww -p 1",
            "ps -p 1 e",
            "ps -o pid,environ -p 1",
            "ps axo environ",
            "ps --format=pid,ENVIRON",
        ),
    ),
    "jq": Program(
        "queries JSON",
        pattern_first=True,
        deny=frozenset({"--rawfile", "--slurpfile"}),
        file_options=frozenset({"-f", "--from-file", "-L"}),
        pattern_options=frozenset({"-f", "--from-file"}),
        check=_jq_check,
        low=("jq .name package.json", "jq -r '.[] | .id' a.json"),
        high=(
            "jq -f /etc/passwd",
            "jq -rf /etc/passwd",
            "jq -n 'import \"data\" as $d; $d'",
            "jq -L /etc -n 'include \"x\"; 1'",
        ),
    ),
    "git": GIT,
}

# Never low, whatever their arguments: they run other programs or reach the network.
WRAPPERS = frozenset({"env", "xargs", "timeout", "nice", "nohup", "sudo", "doas", "su", "exec",
                      "eval", "bash", "sh", "zsh", "dash", "fish", "python", "python3", "node",
                      "perl", "ruby", "command", "builtin", "time", "watch", "strace", "source",
                      ".", "setsid", "disown", "stdbuf", "ionice", "chrt", "taskset", "flock",
                      "unshare", "nsenter", "chroot", "systemd-run", "at", "batch", "screen",
                      "tmux", "script"})  # fmt: skip
NETWORK = frozenset({
    "curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync", "ping", "dig",
    "nslookup", "host", "telnet", "ftp", "socat", "openssl",
})  # fmt: skip


def parse_args(program: Program, args: list[str]) -> tuple[list[Option], list[int]]:
    """The options and operand indexes of `args` as the program would read them."""
    short = program.short_values + "".join(
        f[1] for f in program.file_options if len(f) == 2 and f[0] == "-" and f[1] != "-"
    )
    parsed = parse_options(
        args,
        short_values=short if program.bundles else "",
        long_values=program.long_values | {f for f in program.file_options if f[:2] == "--"},
        bundles=program.bundles,
        double_dash=program.options_end_at_double_dash,
    )
    return parsed.options, parsed.operands


def _denied(program: Program, option: Option) -> str | None:
    denied = matches(option, program.deny)
    if denied is None and not option.long and option.name[1:] in program.letters:
        denied = option.name
    return denied


def _flag_problem(program: Program, name: str, args: list[str]) -> str | None:
    options, operands = parse_args(program, args)
    for option in options:
        denied = _denied(program, option)
        if denied:
            return f"`{name} {denied}` writes, runs a program or reaches out"
    if program.max_operands is not None and len(operands) > program.max_operands:
        return f"`{name}` with {len(operands)} operands writes the last one"
    if program.check is not None:
        return program.check(args)
    return None


def _operands(args: list[str]) -> list[str]:
    operands, options_done = [], False
    for arg in args:
        if arg == "--" and not options_done:
            options_done = True
        elif options_done or not arg.startswith("-") or arg == "-":
            operands.append(arg)
    return operands


def git_globals(args: list[str]) -> tuple[list[tuple[str, str, int]], int] | str:
    """git's global options before the subcommand: the directory options as (name, value,
    index of the value) and the subcommand's index, or why they are not read-only."""
    dirs: list[tuple[str, str, int]] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        name, eq, value = arg.partition("=")
        if arg in GIT_GLOBAL_FLAGS:
            index += 1
        elif name in GIT_GLOBAL_DIRS and (eq or name != "-C") and value:
            dirs.append((name, value, index))
            index += 1
        elif arg in GIT_GLOBAL_DIRS and index + 1 < len(args):
            dirs.append((arg, args[index + 1], index + 1))
            index += 2
        else:
            return f"`git {arg}` changes how git runs"
    return dirs, index


@dataclass(frozen=True, slots=True)
class GitCommand:
    name: str  # the subcommand
    program: Program  # its rules, with what every subcommand denies
    args: list[str]  # its arguments
    offset: int  # where they start in git's arguments
    dirs: list[tuple[str, str, int]]  # -C, --git-dir, --work-tree: (name, value, index)


def git_subcommand(args: list[str]) -> GitCommand | str:
    """The subcommand of git's `args`, or why this git command is not read-only."""
    found = git_globals(args)
    if isinstance(found, str):
        return found
    dirs, index = found
    if index >= len(args):
        return "`git` without a subcommand"
    name = args[index]
    sub = (GIT.subcommands or {}).get(name)
    if sub is None:
        return f"`git {name}` is not a read-only subcommand"
    sub = replace(sub, deny=sub.deny | GIT_ALWAYS_DENIED, letters=sub.letters + "O")
    return GitCommand(name, sub, args[index + 1 :], index + 1, dirs)


def read_only_problem(command: SimpleCommand) -> str | None:
    """None when `command` only reads; otherwise the reason it is not read-only."""
    name, args = command.program, list(command.argv[1:])
    if name in WRAPPERS:
        return f"`{name}` runs other programs"
    if name in NETWORK:
        return f"`{name}` reaches the network"
    program = READ_ONLY.get(name)
    if program is None:
        return f"`{name}` is not a known read-only program"
    if not program.globs and any(command.has_glob[1:]):
        return f"an unquoted glob could expand into options of `{name}`"
    if program.subcommands is None:
        return _flag_problem(program, name, args)
    git = git_subcommand(args)
    if isinstance(git, str):
        return git
    return _git_check(git.args) or _flag_problem(git.program, f"git {git.name}", git.args)


def path_operands(command: SimpleCommand) -> list[tuple[str, bool]]:
    """The arguments that may name files, each with whether it is an unquoted glob:
    operands, long options' values after `=`, and the values of options that read a file
    (`grep -f FILE`, `-fFILE`, `--fi=FILE`) — but not the first operand of programs whose
    first operand is a pattern or script, unless an option gave the pattern."""
    program = READ_ONLY.get(command.program) or Program()
    args, globs = list(command.argv[1:]), command.has_glob[1:]
    if not program.paths:  # only globs, which read directories (`echo ../*`)
        return [(arg, True) for arg, glob in zip(args, globs, strict=True) if glob]
    values: list[tuple[str, bool]] = []
    if program.subcommands is not None:  # git: its subcommand's (-C's directory: shell_risk)
        git = git_subcommand(args)
        if isinstance(git, str):
            return list(zip(args, globs, strict=True))
        program, args, globs = git.program, git.args, globs[git.offset :]
    options, operands = parse_args(program, args)
    for option in options:
        where = option.value_index if option.value_index is not None else option.index
        if option.value is None:
            continue
        if matches(option, program.file_options) or (option.long and where == option.index):
            values.append((option.value, globs[where]))
    pattern_given = any(matches(o, program.pattern_options) for o in options)
    if program.pattern_first and not pattern_given:
        operands = operands[1:]
    values.extend((args[i], globs[i]) for i in operands)
    return values
