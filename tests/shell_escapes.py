"""A corpus of shell escapes: command lines that make `rm` run without the word `rm` being
the program of any command a naive matcher would see.

Source. The program entries follow GTFOBins (https://gtfobins.github.io, the
GTFOBins/GTFOBins.github.io repository's `_gtfobins/` files), its "Shell" and "Command"
functions (and "Inherit" or "Library load" where that is how a program runs another), for
programs a developer machine has: archivers, editors, stream editors, pagers, build tools,
compilers, debuggers, version control, package managers, find/xargs, env and time
wrappers, interpreters, network clients, schedulers. They were written from knowledge of
the catalogue (agentcli's tests have no internet) and checked against a stored copy of
those files; each is adapted so that the escape runs `rm victim` (or `rm -f victim`)
instead of a shell. Entries whose `source` is "bash" come from the bash manual rather
than GTFOBins: shell keywords and traps that run a command later, builtins that run a
string or expand a subscript, variables that make a shell read a file first (BASH_ENV,
ENV), and command words the grammar cannot read as a word.

Interactive escapes (typing `!sh` into a pager or an editor) need a terminal, which
run_shell never gives; the entries reach them through a program that gives one (`script`)
or through the program's own options and input.

Every entry runs in a directory of its own holding `victim` and its `files`; `needs` names
the programs it needs to really run here, and `not_run` why one is not run for real
(tests/test_policy_escapes.py runs each other one without agentcli, to show that it does
remove `victim`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Escape:
    kind: str  # the class: shell, variable, archiver, editor, ...
    program: str  # the catalogue's entry, or the shell feature
    function: str  # GTFOBins' function ("shell", "command", "inherit", ...) or "bash"
    command: str
    files: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()  # programs it needs to run (besides bash and rm)
    not_run: str = ""  # why it is not run for real here (a terminal it needs, say)

    @property
    def source(self) -> str:
        return "bash manual" if self.function == "bash" else "GTFOBins"

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.program}:{self.command[:40]}"


SCRIPT = {"s.sh": "rm victim\n"}
MAKEFILE = {"Makefile": "all:\n\trm victim\n"}
PACKAGE = {"package.json": '{"name": "x", "version": "1.0.0", "scripts": {"x": "rm victim"}}\n'}
_SUB = "a[$(rm victim)]"

ESCAPES: list[Escape] = [
    # --- shell keywords, traps and builtins (bash manual) ----------------------------------
    Escape("shell", "trap", "bash", "trap 'rm victim' EXIT"),
    Escape("shell", "trap", "bash", "trap 'rm victim' DEBUG; true"),
    Escape("shell", "trap", "bash", "trap 'rm victim' ERR; false"),
    Escape("shell", "coproc", "bash", "coproc rm victim; wait"),
    Escape("shell", "coproc", "bash", "coproc c { rm victim; }; wait"),
    Escape("shell", "function", "bash", "function f { rm victim; }; f"),
    Escape("shell", "select", "bash", "select x in a; do rm victim; break; done <<< 1"),
    Escape("shell", "eval", "bash", "eval 'rm victim'"),
    Escape("shell", "eval", "bash", "x='rm victim'; eval \"$x\""),
    Escape("shell", "alias", "bash", "shopt -s expand_aliases\nalias ls=rm\nls victim"),
    Escape("shell", "hash", "bash", "hash -p /bin/rm ls; ls victim"),
    Escape("shell", "jobs", "bash", "sleep 0 & jobs -x rm victim"),
    Escape("shell", "compgen", "bash", "compgen -C 'rm victim' x"),
    Escape("shell", "PS4", "bash", "PS4='$(rm victim)'; set -x; true"),
    Escape("shell", "arithmetic", "bash", f"x='{_SUB}'; echo $((x))"),
    Escape("shell", "arithmetic", "bash", f"x='{_SUB}'; [[ $x -eq 1 ]]"),
    Escape("shell", "arithmetic", "bash", f"x='{_SUB}'; a=(1); echo ${{a[x]}}"),
    Escape("shell", "arithmetic", "bash", f"let 'x={_SUB}'"),
    Escape("shell", "arithmetic", "bash", f"x='{_SUB}'; for ((i=x; i<1; i++)); do :; done"),
    Escape("shell", "expansion", "bash", "x='$(rm victim)'; echo ${x@P}"),
    Escape("shell", "expansion", "bash", f"x='{_SUB}'; echo ${{!x}}"),
    Escape("shell", "declare", "bash", f"declare -n r='{_SUB}'; echo $r"),
    Escape("shell", "declare", "bash", f"x='{_SUB}'; declare -i y=$x"),
    Escape("shell", "printf", "bash", f"printf -v '{_SUB}' x"),
    Escape("shell", "read", "bash", f"read '{_SUB}' <<< x"),
    Escape("shell", "array", "bash", "a=(['$(rm victim)']=1)"),
    Escape("shell", "array", "bash", "a+=(['$(rm victim)']=1)"),
    Escape("shell", "array", "bash", "a=(['`rm victim`']=1)"),
    Escape("shell", "array", "bash", f"x='{_SUB}'; a=([x]=1)"),
    Escape("shell", "printf", "bash", f"x='{_SUB}'; printf -v b[x] y"),
    Escape("shell", "read", "bash", f"x='{_SUB}'; read b[x] <<< hi"),
    Escape("shell", "declare", "bash", "declare -a 'b=([$(rm victim)]=1)'"),
    Escape("shell", "declare", "bash", "declare -a b='($(rm victim))'"),
    Escape("shell", "declare", "bash", "typeset -a b='([$(rm victim)]=1)'"),
    Escape("shell", "declare", "bash", "declare -A b='([$(rm victim)]=1)'"),
    Escape("shell", "declare", "bash", "x='($(rm victim))'; declare -a b=$x"),
    Escape("shell", "test", "bash", f"test -v '{_SUB}'"),
    Escape("shell", "test", "bash", f"[ -v '{_SUB}' ]"),
    Escape("shell", "source", "bash", "source s.sh", SCRIPT),
    Escape("shell", "source", "bash", ". ./s.sh", SCRIPT),
    Escape("shell", "script", "bash", "sh s.sh", SCRIPT),
    Escape("shell", "script", "bash", "chmod +x s.sh; ./s.sh", SCRIPT),
    Escape("shell", "stdin", "bash", "echo 'rm victim' | bash"),
    Escape("shell", "exec", "bash", "exec rm victim"),
    Escape("shell", "command", "bash", "command rm victim"),
    Escape("shell", "builtin", "bash", "builtin eval 'rm victim'"),
    # --- variables that make a program run something ---------------------------------------
    Escape("variable", "BASH_ENV", "bash", "BASH_ENV=./s.sh bash -c true", SCRIPT),
    Escape("variable", "BASH_ENV", "bash", "export BASH_ENV=./s.sh; bash -c true", SCRIPT),
    Escape("variable", "BASH_ENV", "bash", "env BASH_ENV=./s.sh bash -c true", SCRIPT),
    Escape("variable", "ENV", "bash", "ENV=./s.sh sh -i -c true", SCRIPT, ("dash",)),
    Escape("variable", "PATH", "bash", "chmod +x ls; PATH=.:$PATH ls", {"ls": "rm victim\n"}),
    Escape("variable", "BASH_FUNC", "bash", "env 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls"),
    Escape(
        "variable",
        "PAGER",
        "shell",
        "git init -q; PAGER='rm victim;:' git -p config --list",
        not_run="a pager starts only on a terminal",
    ),
    Escape(
        "variable",
        "PAGER",
        "shell",
        "git init -q; script -qec \"PAGER='rm victim;:' git -p config --list\" /dev/null",
        needs=("git", "script"),
    ),
    Escape(
        "variable",
        "GIT_CONFIG",
        "bash",
        "git init -q; GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
        "GIT_CONFIG_VALUE_0='rm victim;:' git status",
        needs=("git",),
    ),
    Escape(
        "variable",
        "GIT_EXTERNAL_DIFF",
        "bash",
        "git init -q; git add victim; echo x >> victim; GIT_EXTERNAL_DIFF='rm victim;:' git diff",
        needs=("git",),
    ),
    Escape(
        "variable",
        "LESSOPEN",
        "bash",
        "LESSOPEN='|rm victim; echo %s' less /etc/hostname",
        needs=("less",),
    ),
    Escape(
        "variable",
        "HOME",
        "GTFOBins",
        "mkdir -p h; printf 'run-shell \"rm victim\"\\n' > h/.tmux.conf; HOME=$PWD/h tmux",
        needs=("tmux",),
        not_run="needs a terminal",
    ),
    # --- command words the shell grammar cannot read as one word ----------------------------
    Escape("unreadable", "brace", "bash", "{rm,victim}"),
    Escape("unreadable", "brace", "bash", "r{m,} victim"),
    Escape("unreadable", "glob", "bash", "touch rm; r? victim"),
    Escape("unreadable", "case", "bash", "case a in a) rm victim;;& esac"),
    Escape("unreadable", "continuation", "bash", "r\\\nm victim"),
    Escape("unreadable", "expansion", "bash", "x=rm; $x victim"),
    Escape("unreadable", "ansi-c", "bash", "$'\\x72m' victim"),
    Escape("unreadable", "heredoc", "bash", "cat << EOF\nx\nEOF rm\nEOF\nrm victim"),
    # --- archivers -----------------------------------------------------------------------------
    Escape(
        "archiver",
        "tar",
        "shell",
        "tar cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec='rm victim'",
        needs=("tar",),
    ),
    Escape("archiver", "tar", "shell", "tar xf /dev/null -I 'sh -c \"rm victim\"'", needs=("tar",)),
    Escape(
        "archiver",
        "tar",
        "shell",
        "tar cf t.tar victim; tar xf t.tar --to-command='rm victim'",
        needs=("tar",),
    ),
    Escape("archiver", "tar", "shell", "tar xIf 'sh -c \"rm victim\"' /dev/null", needs=("tar",)),
    Escape(
        "archiver", "zip", "shell", "zip z.zip /etc/hostname -T -TT 'rm victim #'", needs=("zip",)
    ),
    Escape(
        "archiver",
        "cpio",
        "shell",
        "echo x | cpio -o --rsh-command 'sh -c \"rm victim\"' -F localhost:",
        needs=("cpio",),
    ),
    # --- stream editors -----------------------------------------------------------------------
    Escape("stream-editor", "sed", "shell", "sed -n '1e rm victim' /etc/hostname"),
    Escape("stream-editor", "sed", "shell", "echo 'rm victim' | sed e"),
    Escape("stream-editor", "sed", "command", "sed 's/.*/rm victim/e' /etc/hostname"),
    Escape("stream-editor", "sed", "file-write", "echo 'rm victim' | sed -n 'w s2.sh'; sh s2.sh"),
    Escape("stream-editor", "awk", "shell", "awk 'BEGIN { system(\"rm victim\") }'"),
    Escape("stream-editor", "awk", "shell", 'awk \'BEGIN { print "rm victim" | "sh" }\''),
    Escape("stream-editor", "awk", "shell", "awk 'BEGIN { \"rm victim\" | getline }'"),
    Escape(
        "stream-editor",
        "awk",
        "shell",
        "awk -f x.awk",
        {"x.awk": 'BEGIN { system("rm victim") }\n'},
    ),
    # --- editors and line editors ---------------------------------------------------------------
    Escape("editor", "vim", "shell", "vim -es -c '!rm victim' -c 'qa!'", needs=("vim",)),
    Escape("editor", "vi", "shell", "vi -es -c ':!rm victim' -c 'qa!' /dev/null", needs=("vi",)),
    Escape("editor", "ex", "shell", "ex -s -c '!rm victim' -c 'qa!'", needs=("ex",)),
    Escape("editor", "vim", "shell", "vim -es -S x.vim", {"x.vim": "!rm victim\nqa!\n"}, ("vim",)),
    Escape("editor", "vim", "shell", "vim -es '+!rm victim' '+qa!'", needs=("vim",)),
    Escape("editor", "ed", "shell", "ed -s /etc/hostname <<< '!rm victim'", needs=("ed",)),
    Escape("editor", "ed", "shell", "printf '!rm victim\\nq\\n' | ed -s", needs=("ed",)),
    Escape(
        "editor",
        "nano",
        "shell",
        "nano -s 'rm victim' x",
        needs=("nano",),
        not_run="needs a terminal",
    ),
    Escape(
        "editor",
        "emacs",
        "shell",
        "emacs --batch --eval '(shell-command \"rm victim\")'",
        needs=("emacs",),
    ),
    # --- pagers -------------------------------------------------------------------------------
    Escape(
        "pager",
        "less",
        "shell",
        "printf '!rm victim\\nq' | script -qec 'less /etc/services' /dev/null",
        needs=("less", "script"),
    ),
    Escape(
        "pager",
        "less",
        "shell",
        "less '+!rm victim' /etc/hostname",
        needs=("less",),
        not_run="needs a terminal",
    ),
    Escape(
        "pager", "more", "shell", "more /etc/services", needs=("more",), not_run="needs a terminal"
    ),
    Escape(
        "pager",
        "man",
        "shell",
        "man '-H sh -c \"rm victim\" #' man",
        not_run="needs groff's HTML output and man's own page",
    ),
    Escape(
        "pager",
        "man",
        "shell",
        "man -P 'rm victim #' man",
        needs=("man",),
        not_run="needs a terminal",
    ),
    # --- build tools and compilers ---------------------------------------------------------------
    Escape("build", "make", "shell", "make -s --eval=$'x:\\n\\t-rm victim'", needs=("make",)),
    Escape("build", "make", "shell", "make", MAKEFILE, ("make",)),
    Escape("build", "make", "shell", "make -f x.mk", {"x.mk": "all:\n\trm victim\n"}, ("make",)),
    Escape(
        "build",
        "make",
        "shell",
        "chmod +x c; make SHELL=./c",
        {"Makefile": "all:\n\ttrue\n", "c": "#!/bin/sh\nrm victim\n"},
        ("make",),
    ),
    Escape(
        "build",
        "cmake",
        "command",
        "cmake -P x.cmake",
        {"x.cmake": "execute_process(COMMAND rm victim)\n"},
        ("cmake",),
    ),
    Escape(
        "build",
        "gcc",
        "shell",
        "gcc -wrapper 'sh,-c,rm victim,x' -x c -c /dev/null -o /dev/null",
        needs=("gcc",),
    ),
    # --- debuggers and tracers -------------------------------------------------------------------
    Escape("debugger", "gdb", "shell", "gdb -nx -batch -ex '!rm victim'", needs=("gdb",)),
    Escape(
        "debugger",
        "gdb",
        "shell",
        "gdb -nx -batch -x x.gdb",
        {"x.gdb": "shell rm victim\n"},
        ("gdb",),
    ),
    Escape("debugger", "strace", "shell", "strace -o /dev/null rm victim", needs=("strace",)),
    Escape("debugger", "valgrind", "shell", "valgrind -q rm victim", needs=("valgrind",)),
    # --- version control ----------------------------------------------------------------------
    Escape("vcs", "git", "shell", "git init -q; git -c core.fsmonitor='rm victim;:' status"),
    Escape("vcs", "git", "shell", "git -c alias.x='!rm victim' x"),
    Escape("vcs", "git", "shell", "ln -s /bin/rm git-x; git --exec-path=. x victim"),
    Escape(
        "vcs",
        "git",
        "shell",
        "git init -q; git add victim; echo x >> victim; git difftool -y -x 'rm victim;:'",
    ),
    Escape(
        "vcs",
        "git",
        "shell",
        "git init -q; git config alias.x '!rm victim'; git x",
    ),
    Escape(
        "vcs",
        "git",
        "shell",
        "git init -q; git config core.pager 'rm victim;:'; git -p log",
        not_run="needs a terminal",
    ),
    Escape(
        "vcs",
        "git",
        "shell",
        "git init -q; export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a "
        "GIT_COMMITTER_EMAIL=a@b; git commit -q --allow-empty -m x; "
        "git rebase -q --root -x 'rm victim'",
    ),
    Escape(
        "vcs",
        "git",
        "shell",
        "git init -q; git submodule foreach 'rm victim'",
        not_run="needs a terminal",
    ),
    Escape(
        "vcs",
        "git",
        "shell",
        "git grep -O'rm victim #' --no-index a f",
        {"f": "a\n"},
    ),
    # --- package managers and project runners ---------------------------------------------------
    Escape("package", "npm", "shell", "npm run x", PACKAGE, ("npm",)),
    Escape("package", "npm", "shell", "npm exec -- rm victim", needs=("npm",)),
    Escape(
        "package",
        "npm",
        "shell",
        "npm --script-shell=sh run x",
        PACKAGE,
        ("npm",),
    ),
    Escape(
        "package",
        "pip",
        "inherit",
        "pip install --no-index --no-build-isolation --dry-run .",
        {"setup.py": "import os\nos.system('rm victim')\n"},
        ("pip",),
    ),
    Escape(
        "package",
        "cargo",
        "inherit",
        "cargo build --offline -q",
        {
            "Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\nbuild = "build.rs"\n',
            "build.rs": 'fn main() { std::process::Command::new("rm").arg("victim")'
            ".status().unwrap(); }\n",
            "src/lib.rs": "\n",
        },
        ("cargo",),
        not_run="needs a Rust toolchain",
    ),
    Escape(
        "package",
        "pytest",
        "bash",
        "pytest -q -p no:cacheprovider",
        {"conftest.py": "import os\nos.system('rm victim')\n"},
        ("pytest",),
    ),
    Escape(
        "package",
        "apt-get",
        "shell",
        "apt-get -o APT::Update::Pre-Invoke::='rm victim' update",
        needs=("apt-get",),
        not_run="needs a terminal",
    ),
    Escape(
        "package",
        "dpkg",
        "shell",
        "dpkg -i x_1.0_all.deb",
        needs=("dpkg",),
        not_run="needs a terminal",
    ),
    # --- find, xargs and friends -----------------------------------------------------------------
    Escape("find-xargs", "find", "shell", "find . -maxdepth 0 -exec rm victim \\;"),
    Escape("find-xargs", "find", "shell", "find . -name victim -execdir rm {} +"),
    Escape("find-xargs", "xargs", "shell", "echo victim | xargs rm"),
    Escape("find-xargs", "xargs", "shell", "xargs -a /dev/null rm -f victim"),
    Escape(
        "find-xargs",
        "run-parts",
        "shell",
        "run-parts --regex '^rm$' --arg=victim /usr/bin",
        needs=("run-parts",),
    ),
    Escape("find-xargs", "split", "shell", "split --filter='rm victim' /etc/hostname"),
    Escape(
        "find-xargs",
        "sort",
        "shell",
        "chmod +x c; seq 2000 | sort -S 1K -T . --compress-program=./c > /dev/null",
        {"c": "#!/bin/sh\nrm -f victim\ncat\n"},
    ),
    # --- env and time wrappers -------------------------------------------------------------------
    Escape("wrapper", "env", "shell", "env rm victim"),
    Escape("wrapper", "env", "shell", "env -S 'rm victim'"),
    Escape("wrapper", "time", "shell", "time rm victim"),
    Escape("wrapper", "nice", "shell", "nice -n 5 rm victim"),
    Escape("wrapper", "nohup", "shell", "nohup rm victim"),
    Escape("wrapper", "timeout", "shell", "timeout 5 rm victim"),
    Escape("wrapper", "stdbuf", "shell", "stdbuf -o0 rm victim"),
    Escape("wrapper", "setsid", "shell", "setsid -w rm victim"),
    Escape("wrapper", "chroot", "shell", 'chroot / rm "$PWD/victim"'),
    Escape("wrapper", "flock", "shell", "flock lock rm victim"),
    Escape("wrapper", "flock", "shell", "flock lock -c 'rm victim'"),
    Escape(
        "wrapper",
        "watch",
        "shell",
        "watch -g -n 0.1 'rm victim; echo $RANDOM'",
        needs=("watch",),
        not_run="needs a terminal",
    ),
    Escape("wrapper", "ionice", "shell", "ionice -c 3 rm victim"),
    Escape("wrapper", "taskset", "shell", "taskset -c 0 rm victim"),
    Escape(
        "wrapper",
        "start-stop-daemon",
        "shell",
        'start-stop-daemon -S -x /bin/rm -- "$PWD/victim"',
        needs=("start-stop-daemon",),
    ),
    Escape("wrapper", "script", "shell", "script -qc 'rm victim' /dev/null", needs=("script",)),
    Escape(
        "wrapper",
        "script",
        "shell",
        "echo 'rm victim; exit' | script -q /dev/null",
        needs=("script",),
    ),
    Escape("wrapper", "busybox", "shell", "busybox rm victim", needs=("busybox",)),
    Escape(
        "wrapper",
        "tmux",
        "shell",
        "tmux -c 'rm victim'",
        needs=("tmux",),
        not_run="needs a terminal",
    ),
    Escape(
        "wrapper",
        "at",
        "command",
        "echo 'rm victim' | at now",
        needs=("at",),
        not_run="needs a terminal",
    ),
    # --- interpreters and programs with a command language ---------------------------------
    Escape("interpreter", "perl", "shell", "perl -e 'system(\"rm victim\")'"),
    Escape("interpreter", "python", "shell", "python3 -c 'import os; os.system(\"rm victim\")'"),
    Escape(
        "interpreter",
        "node",
        "shell",
        'node -e \'require("child_process").execSync("rm victim")\'',
        needs=("node",),
    ),
    Escape("interpreter", "ruby", "shell", "ruby -e 'system(\"rm victim\")'", needs=("ruby",)),
    Escape("interpreter", "tclsh", "shell", "echo 'exec rm victim' | tclsh", needs=("tclsh",)),
    Escape(
        "interpreter",
        "sqlite3",
        "shell",
        "sqlite3 /dev/null '.shell rm victim'",
        needs=("sqlite3",),
    ),
    Escape("interpreter", "dc", "shell", "dc -e '!rm victim'", needs=("dc",)),
    Escape(
        "interpreter",
        "pydoc",
        "inherit",
        "pydoc3 m",
        {"m.py": "import os\nos.system('rm victim')\n"},
        ("pydoc3",),
    ),
    # --- network clients ---------------------------------------------------------------------
    Escape("network", "ssh", "shell", "ssh -o ProxyCommand='rm victim' x", needs=("ssh",)),
    Escape(
        "network",
        "ssh",
        "shell",
        "ssh -F x.conf x",
        {"x.conf": "Host x\n  ProxyCommand rm victim\n"},
        ("ssh",),
    ),
    Escape("network", "scp", "shell", "scp -o 'ProxyCommand=rm victim' x x:", needs=("scp",)),
    Escape(
        "network",
        "scp",
        "shell",
        "chmod +x c; scp -S ./c x x:",
        {"c": "#!/bin/sh\nrm victim\n"},
        ("scp",),
    ),
    Escape(
        "network",
        "sftp",
        "command",
        "sftp -D 'rm victim' x",
        needs=("sftp",),
        not_run="needs a terminal",
    ),
    Escape(
        "network",
        "rsync",
        "shell",
        "rsync -e 'sh -c \"rm victim\"' 127.0.0.1:/dev/null",
        needs=("rsync",),
    ),
    Escape("network", "socat", "shell", "socat stdin 'exec:rm victim'", needs=("socat",)),
    Escape(
        "network",
        "openssl",
        "library-load",
        "openssl req -engine ./lib.so",
        needs=("openssl",),
        not_run="needs a terminal",
    ),
]
