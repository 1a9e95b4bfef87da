"""The values a request spells out for each kind of argument, read from its words with no
model: a URL, an arithmetic expression (numbers with operators, or in words: "81 divided
by 9"), a quoted string, the text a file is to hold ("create todo.txt containing call
mom"), the text to search for, a command line, a web query, a glob for a kind of file.

The grammar (agentcli.providers.local.grammar) narrows a copied argument to these values
when the request has any, so that the small model chooses among a few right-shaped values
rather than among every run of words. Each reader answers for a shape of request, never
for one request; an empty list means "no such shape here" (the grammar then falls back to
the request's spans)."""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterable

_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|`([^`]+)`|“([^”]+)”|‘([^’]+)’")
_URL = re.compile(r"https?://[^\s\"'<>`]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that join a request's parts, never the start or end of a value
_JOINERS = _words(
    "a an the of to for in into inside within under from on at with by as and or me my "
    "please pls can could would you u i we us our this that these those it is are be some "
    "all every any here there now"
)
# Words that ask for an action: the value follows them
_VERBS = _words(
    "show display print read open view list find search grep look hunt locate get fetch "
    "download grab run execute exec launch start type fire kick up off make create write "
    "save put store add fill overwrite new tell give let see calculate compute evaluate "
    "work out what where which who how is are do does"
)


def _clean(text: str) -> str:
    return text.strip().strip("\"'`“”‘’").rstrip("?!.,;:").strip().strip("\"'`“”‘’")


def _unique(values: Iterable[str]) -> list[str]:
    return [value for value in dict.fromkeys(_clean(v) for v in values) if value]


def _tails(markers: re.Pattern[str], request: str) -> list[str]:
    """What follows each marker of the request, the last marker's first (the words
    closest to the value: "find mentions of localhost" → "localhost" before "mentions of
    localhost")."""
    return [request[match.end() :] for match in markers.finditer(request)][::-1]


def quoted(request: str) -> list[str]:
    """Strings in quotes: 'hello world', "def main", `make build`."""
    found = []
    for match in _QUOTED.finditer(request):
        text = next(group for group in match.groups() if group is not None)
        # an apostrophe inside a word ("what's", "don't") opens no quote
        # a quote opens after a space and closes before one ("what's", "print('hi')"
        # hold no quoted string)
        before = request[match.start() - 1] if match.start() else " "
        after = request[match.end()] if match.end() < len(request) else " "
        opens = before.isspace() or before == ":"
        closes = after.isspace() or after in ".,;:!?"
        if not (opens and closes):
            continue
        found.append(text)
    return _unique(found)


def urls(request: str) -> list[str]:
    return _unique(match.group(0) for match in _URL.finditer(request))


# Arithmetic in words, as operators (longest phrases first)
_OPERATOR_WORDS = (
    (r"\bto the power of\b", "**"),
    (r"\braised to\b", "**"),
    (r"\bmultiplied by\b", "*"),
    (r"\bdivided by\b", "/"),
    (r"\bover\b", "/"),
    (r"\btimes\b", "*"),
    (r"\bplus\b", "+"),
    (r"\bminus\b", "-"),
    (r"\bmod(?:ulo)?\b", "%"),
    (r"(?<=\d)\s*x\s*(?=\d)", "*"),
    (r"(?<=\d)\s*×\s*(?=\d)", "*"),
    (r"(?<=\d)\s*÷\s*(?=\d)", "/"),
)
_NUMBER = r"\d+(?:\.\d+)?"
_DIVIDE = re.compile(rf"\bdivide\s+({_NUMBER})\s+by\s+({_NUMBER})")
_MULTIPLY = re.compile(rf"\bmultiply\s+({_NUMBER})\s+(?:by|and|with)\s+({_NUMBER})")
_ADD = re.compile(rf"\badd\s+({_NUMBER})\s+(?:and|to)\s+({_NUMBER})")
_SUBTRACT = re.compile(rf"\bsubtract\s+({_NUMBER})\s+from\s+({_NUMBER})")
# "15% of 80", "20 percent of 450": a share of a number
_PERCENT_OF = re.compile(rf"({_NUMBER})\s*(?:%|percent\b|per cent\b)\s*of\s+({_NUMBER})")
_SQUARED = re.compile(rf"({_NUMBER})\s+squared\b")
_MATH_RUN = re.compile(r"[\w.(][\w.()\s+\-*/%^]*[\w.)]|\d")


def _is_arithmetic(text: str) -> bool:
    """An expression with a number and an operator that Python's parser reads (names of
    functions such as sqrt are allowed: the calculator knows them)."""
    if not re.search(r"\d", text) or not re.search(r"[-+*/%^]|\w\(", text):
        return False
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError:
        return False
    return not any(isinstance(node, ast.Attribute | ast.Subscript) for node in ast.walk(tree))


def expressions(request: str) -> list[str]:
    """Arithmetic the request spells out: as written ("17*23", "(45+55)*3"), or in words
    turned into operators ("144 divided by 12" → "144 / 12", "divide 144 by 12" →
    "144 / 12", "3 squared" → "3**2")."""
    text = request.lower()
    text = _PERCENT_OF.sub(r"\1 / 100 * \2", text)
    text = _DIVIDE.sub(r"\1 / \2", text)
    text = _MULTIPLY.sub(r"\1 * \2", text)
    text = _ADD.sub(r"\1 + \2", text)
    text = _SUBTRACT.sub(r"\2 - \1", text)
    text = _SQUARED.sub(r"\1**2", text)
    for words, operator in _OPERATOR_WORDS:
        text = re.sub(words, f" {operator} ", text)
    found = []
    for match in _MATH_RUN.finditer(text):
        candidate = " ".join(match.group(0).split())
        # words at the edges are not the expression ("what is 2 + 2" → "2 + 2")
        words = candidate.split()
        while words and re.fullmatch(r"[a-z]+", words[0]):
            words.pop(0)
        while words and re.fullmatch(r"[a-z]+", words[-1]):
            words.pop()
        candidate = " ".join(words)
        if _is_arithmetic(candidate):
            found.append(candidate)
    return _unique(found)


# Markers after which a request gives the text a file is to hold
_CONTENT_AFTER = re.compile(
    r"\b(?:containing|contains|that says|which says|saying|says|with the (?:text|content|"
    r"contents|line|lines|words?|string|number|value)|with content|with text|with|reading|"
    r"that reads|content|contents|text)\s*:?\s+",
    re.IGNORECASE,
)
# "write X to FILE", "save the text X into FILE", "put X in FILE"
_CONTENT_BEFORE = re.compile(
    r"\b(?:write|save|put|store|add|append|echo|place|insert)\s+(?:the\s+(?:text|line|word|"
    r"words|string|number|value|content)\s+)?(.+?)\s+(?:to|into|in|inside|as)\s+(?:the\s+"
    r"file\s+|a\s+file\s+|file\s+)?(\S+)\s*$",
    re.IGNORECASE,
)


_INTO = frozenset({"to", "into", "in", "inside", "as"})
# Words after "folder" or "file" that name no entry ("the directory listing")
_FOLDER_WORDS = _words("listing list contents content tree structure names called named")
_FILE_NAMED = re.compile(
    r"\b(?:file|folder|directory|dir)\s+(?:called\s+|named\s+)?([\w.-]+(?:/[\w.-]+)*)",
    re.IGNORECASE,
)


def file_names(request: str) -> list[str]:
    """The names of files (or folders) a request writes when none reads as a path ("put
    1.2 into VERSION", "a file called LICENSE", "a folder named logs"): after "file
    (called|named)", or the last word after "to"/"into"/"in" of a request that writes."""
    found = [match.group(1) for match in _FILE_NAMED.finditer(request)]
    before = _CONTENT_BEFORE.search(request)
    if before:
        found.append(before.group(2))
    return [name for name in _unique(found) if name.lower() not in _JOINERS | _FOLDER_WORDS]


# A request that writes a file
_WRITES = re.compile(
    r"\b(?:write|save|put|store|add|append|create|make|new file|fill|overwrite|echo|place|"
    r"insert|replace)\b",
    re.IGNORECASE,
)


def file_contents(request: str, paths: Iterable[str]) -> list[str]:
    """The text a file is to hold: quoted, after "containing", "with the text", "that
    says"..., or between "write" and "to FILE"; never the file's own name. Only in a
    request that writes or names a file ("translate 'good night'" is no file's text)."""
    if not (_WRITES.search(request) or re.search(r"\bfile\b", request, re.IGNORECASE)):
        return []
    if replacements(request) and not asks_whole_file(request):
        return []  # "replace milk with bread": an edit's words, no file's whole text
    names = {_clean(path) for path in paths}
    found = list(quoted(request))
    before = _CONTENT_BEFORE.search(request)
    if before:
        found.append(before.group(1))
    found += _tails(_CONTENT_AFTER, request)
    values = []
    for value in _unique(found):
        words = value.split()
        # "the text ok into status.txt": the words up to the file's name
        if len(words) > 2 and _clean(words[-1]) in names and words[-2].lower() in _INTO:
            words = words[:-2]
        if not any(_clean(word) in names for word in words):
            values.append(" ".join(words))
    return _unique(values)


# Words after which a request names what to search for
_SEARCH_MARKERS = re.compile(
    r"\b(?:for|word|string|text|term|mentions? of|occurrences? of|uses? of|containing|"
    r"contains?|mentions?|grep|search|find|look for|hunt for|called|named)\s+(?:the\s+"
    r"(?:word|string|text|term)\s+)?",
    re.IGNORECASE,
)
_SEARCH_TAIL = re.compile(
    r"\s+(?:in|inside|within|across|from|under|throughout|through)\b.*$"
    r"|\s+(?:comments?|mentions?|occurrences?|references?|usages?|calls?|is (?:used|defined|"
    r"called)|are used|used|defined|called|declared|mentioned|appears?)\b.*$",
    re.IGNORECASE,
)
# A name in code, a marker in capitals (load_users, parseArgs, API_KEY, TODO, FIXME)
_CODE_NAME = re.compile(
    r"^(?:[A-Za-z]+(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z]{3,}(?:_[A-Z0-9]+)*"
    r"|[a-z_]+\(\)?)$"
)


# A request to look for text says so ("find", "grep", "where is X used", "which files
# mention X")
_ASKS_TO_SEARCH = re.compile(
    r"\b(?:find|search|grep|look(?:ing)? (?:for|through)|hunt|where|locate|mentions?|"
    r"mentioned|contains?|containing|occurr\w*|uses?|used|calls?|called|defined|appears?)\b",
    re.IGNORECASE,
)


# A search for files by their names
_FILES_BY_NAME = re.compile(r"\bfiles?\s+(?:named|called)\b", re.IGNORECASE)
# A search of the web, not of the files
_ASKS_THE_WEB = re.compile(
    r"\b(?:online|internet|the web|web search|google|bing|duckduckgo)\b", re.IGNORECASE
)
# "the sqlalchemy package", "the parse function": a name in code by what it is
_NAMED_IN_CODE = re.compile(
    r"\bthe\s+([A-Za-z_][\w.]*)\s+(?:package|module|library|function|method|class|variable|"
    r"constant|macro|type|struct|enum|field|import)\b",
    re.IGNORECASE,
)
# Words for text itself, before the text ("the word fixme", "mentions of localhost")
_TEXT_NOUNS = _words(
    "word words string strings text term terms line lines mention mentions occurrence "
    "occurrences use uses usage usages reference references call calls comment comments"
)


def search_texts(request: str, paths: Iterable[str]) -> list[str]:
    """What to search for: quoted, a name in code or capitals, or the words after "for",
    "the word", "mentions of"... (up to "in FOLDER" or "comments"); never a path the request
    names, nor a word that only joins."""
    if not _ASKS_TO_SEARCH.search(request) or _ASKS_THE_WEB.search(request):
        return []  # "what does HTTP stand for?" names no text to search for in files
    if _FILES_BY_NAME.search(request):
        return []  # "files named x": their names, not their text
    names = {_clean(path) for path in paths}
    found = list(quoted(request))
    run: list[str] = []  # capitals in a row are one marker ("BEGIN PRIVATE")
    for word in [*request.split(), ""]:
        word = _clean(word)
        if re.fullmatch(r"[A-Z]{3,}(?:_[A-Z0-9]+)*", word):
            run.append(word)
            continue
        if run:
            found.append(" ".join(run))
            run = []
        if _CODE_NAME.match(word) and word not in names:
            found.append(word)
    found += (match.group(1) for match in _NAMED_IN_CODE.finditer(request))
    if found:
        return _unique(found)
    for tail in _tails(_SEARCH_MARKERS, request):
        value = _SEARCH_TAIL.sub("", tail)
        words = [w for w in value.split() if _clean(w)]
        while words and _clean(words[0]).lower() in _JOINERS | _VERBS | _TEXT_NOUNS:
            words.pop(0)
        while words and (_clean(words[-1]).lower() in _JOINERS or _clean(words[-1]) in names):
            words.pop()
        if words and len(words) <= 4:
            found.append(" ".join(words))
    return [
        value
        for value in _unique(found)
        if not any(_clean(word) in names for word in value.split())
    ]


# Words that ask to run a command; the command line follows
_RUN_MARKERS = re.compile(
    r"\b(?:run|execute|exec|launch|start|type|invoke|kick off|fire up|command|output of|"
    r"result of)\s*:?\s+",
    re.IGNORECASE,
)
_POLITE_TAIL = re.compile(
    r"\s+(?:for me|please|now|for us|in the terminal|in a shell|in the shell|command|"
    r"thanks|thank you)\s*[.!?,]*$",
    re.IGNORECASE,
)
# Programs a request may name that a tool of its own serves better ("cat README.md" is
# read_file, "ls src" list_directory): a bare command line never starts with them
_TOOL_PROGRAMS = _words("cat ls dir grep rg find mkdir head tail less more tree echo touch")


def commands(request: str) -> list[str]:
    """Command lines: quoted, or the words after "run", "execute", "type:"..., from the
    first word that names a program installed here (or, with none, that is not a joining
    word). Only after such a word: a quoted string alone is no command."""
    tails = _tails(_RUN_MARKERS, request)
    found = list(quoted(request)) if tails else []
    bare = bare_command(request)
    if bare:
        found.append(bare)
    for tail in tails:
        while _POLITE_TAIL.search(tail):
            tail = _POLITE_TAIL.sub("", tail)
        words = tail.split()
        start = next(
            (i for i, w in enumerate(words) if _program(w)),
            next((i for i, w in enumerate(words) if w.lower() not in _JOINERS), None),
        )
        if start is not None:
            found.append(" ".join(words[start:]))
    return _unique(found)


def bare_command(request: str) -> str | None:
    """A request that is itself a command line ("git status", "uname -a", "pwd"): it
    starts with a program installed here that no tool serves better, and is no question
    or sentence (no "?", a few words)."""
    words = request.strip().split()
    if not words or "?" in request or len(words) > 8:
        return None
    first = words[0]
    if first != first.lower() or first in _TOOL_PROGRAMS or not _program(first):
        return None
    if any(word.lower() in _JOINERS for word in words[1:]):
        return None  # "make a folder called logs" is a sentence, not a command line
    return " ".join(words)


def starts_with_program(line: str) -> bool:
    """Whether a command line's first word names a program here (or a script)."""
    words = line.split()
    return bool(words) and _program(words[0])


def _program(word: str) -> bool:
    """A word that names a program on PATH (git, make, df), or a script (./build.sh)."""
    word = _clean(word)
    if word.startswith("./") and len(word) > 2:
        return True
    return (
        bool(re.fullmatch(r"[A-Za-z0-9][\w.+-]*", word))
        and word.lower() not in _JOINERS
        and shutil.which(word) is not None
    )


_QUERY_MARKERS = re.compile(
    r"\b(?:search (?:the )?(?:web|internet|net|online)(?: for)?|web search|search online for|"
    r"look up(?: online)?|google|bing|duckduckgo|articles? (?:on|about)|information "
    r"(?:on|about)|info (?:on|about)|online for|(?:on|from) the (?:internet|web)(?: about|"
    r" for)?)\s*:?\s+",
    re.IGNORECASE,
)
_QUERY_TAIL = re.compile(
    r"\s+(?:on|from|in|using|via) (?:the )?(?:web|internet|net|google|online)\b.*$"
    r"|\s+online\s*[.!?]*$",
    re.IGNORECASE,
)


def web_queries(request: str) -> list[str]:
    """What to search the web for: quoted, or the words after "search the web for",
    "google", "look up"... (without "online" or "on the internet"); a quoted string
    only after such words."""
    tails = _tails(_QUERY_MARKERS, request)
    found = list(quoted(request)) if tails else []
    for tail in tails:
        value = _QUERY_TAIL.sub("", tail)
        words = value.split()
        while words and words[0].lower() in _JOINERS:
            words.pop(0)
        if words:
            found.append(" ".join(words))
    return _unique(found)


# File kinds a user names in words, and their usual extensions
KIND_EXTENSIONS = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "markdown": "md",
    "yaml": "yaml",
    "yml": "yml",
    "json": "json",
    "toml": "toml",
    "css": "css",
    "html": "html",
    "shell": "sh",
    "bash": "sh",
    "rust": "rs",
    "go": "go",
    "golang": "go",
    "java": "java",
    "kotlin": "kt",
    "ruby": "rb",
    "php": "php",
    "c++": "cpp",
    "cpp": "cpp",
    "csharp": "cs",
    "c#": "cs",
    "swift": "swift",
    "sql": "sql",
    "csv": "csv",
    "text": "txt",
    "txt": "txt",
    "png": "png",
    "jpeg": "jpg",
    "jpg": "jpg",
    "gif": "gif",
    "svg": "svg",
    "pdf": "pdf",
    "xml": "xml",
    "ini": "ini",
    "log": "log",
    "lua": "lua",
    "perl": "pl",
    "c": "c",
    "header": "h",
    "rst": "rst",
    "restructuredtext": "rst",
    "docker": "Dockerfile",
    "makefile": "Makefile",
    "jsx": "jsx",
    "tsx": "tsx",
    "vue": "vue",
    "scala": "scala",
}
_EXTENSIONS = frozenset(KIND_EXTENSIONS.values())
_KIND_NOUNS = (
    r"(?:files?|scripts?|sources?|source files?|modules?|docs?|documents?|images?|"
    r"pictures?|sheets?|stylesheets?|programs?|configs?|configuration files?|code)"
)


def file_globs(request: str) -> list[str]:
    """Globs for the files a request asks to find: by extension (".sql", "*.py", "files
    ending in .log"), by a kind in words ("python files", "png images", "markdown docs"), or
    by name ("a file named schema.sql", "files called config")."""
    found = []
    text = request.replace("’", "'")
    for match in re.finditer(r"(?<![\w/])\*?\.([A-Za-z0-9]{1,8})\b(?![./\w])", text):
        found.append(f"**/*.{match.group(1)}")
    named = re.search(r"\b(?:named|called)\s+(\S+)", text, re.IGNORECASE)
    if named:
        name = _clean(named.group(1))
        if name.lower() not in _JOINERS:
            found.append(f"**/{name}" if "." in name else f"**/*{name}*")
    for match in re.finditer(rf"\b([\w#+]+)\s+{_KIND_NOUNS}\b", text, re.IGNORECASE):
        kind = match.group(1).lower()
        extension = KIND_EXTENSIONS.get(kind) or (kind if kind in _EXTENSIONS else None)
        if extension and extension[0].isupper():
            found.append(f"**/{extension}")
        elif extension:
            found.append(f"**/*.{extension}")
    if not found:  # "where is settings.json?": a file by its whole name
        for word in text.split():
            word = _clean(word)
            if re.fullmatch(r"(?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}", word):
                found.append(f"**/{word}")
    return list(dict.fromkeys(found))


# "replace X with Y", "change X to Y", "swap X for Y", "turn X into Y", "X -> Y", "says Y
# instead of X", "substitute Y for X": what an edit changes, old text first
_EDIT_FORWARD = re.compile(
    r"\b(?:replace|replacing|change|changing|swap|switch|rename|renaming|turn|update|"
    r"correct|fix)\s+(?P<old>.+?)\s+(?:with|by|to|into|for|->|→)\s+(?P<new>.+)$",
    re.IGNORECASE,
)
_EDIT_ARROW = re.compile(r"(?P<old>\S.*?)\s*(?:->|→|=>)\s*(?P<new>\S.*)$")
_EDIT_INSTEAD = re.compile(
    r"\b(?:says?|reads?|has|have|to|use|uses)?\s*(?P<new>\S.*?)\s+instead\s+of\s+(?P<old>.+)$",
    re.IGNORECASE,
)
_EDIT_SUBSTITUTE = re.compile(r"\bsubstitute\s+(?P<new>.+?)\s+for\s+(?P<old>.+)$", re.IGNORECASE)
_EDIT_SED = re.compile(r"\bs/(?P<old>[^/]+)/(?P<new>[^/]*)/g?")
# Where the file is named around an edit: "in notes.md,", "of ROADMAP.md", "so that it says"
_EDIT_PLACE = re.compile(
    r"(?:^|\s)(?:in|inside|within|of|from|on|at|throughout)\s+(?:the\s+)?(?:file\s+)?"
    r"(?P<path>[\w./-]*\w\.[A-Za-z0-9]{1,8}|[\w.-]+/[\w./-]+)\s*[,:]?",
    re.IGNORECASE,
)
_EDIT_LEAD = re.compile(
    r"^(?:.*?\b(?:edit|modify|update|change)\s+\S+\s+so\s+(?:that\s+)?(?:it\s+)?)",
    re.IGNORECASE,
)
_EDIT_NOUNS = _words("word words text string line value name number phrase entry")


def _edit_value(text: str) -> str:
    words = text.split()
    while words and (words[0].lower() in {"the", "a", "an", "all", "every", "each"}):
        words.pop(0)
    if len(words) > 1 and words[0].lower() in _EDIT_NOUNS:
        words.pop(0)  # "the word draft": draft
    value = " ".join(words)
    value = re.sub(r"\s+(?:please|for me|thanks?|thank you)\s*[.!?]*$", "", value, flags=re.I)
    return _clean(value)


def replacements(request: str) -> list[tuple[str, str]]:
    """What an edit replaces and with what, as the request spells it: (old, new) pairs.
    Only the file's name is taken out ("in notes.md, replace milk with bread" → ("milk",
    "bread")); "in every file" and the like stay part of neither value."""
    found: list[tuple[str, str]] = []
    sed = _EDIT_SED.search(request)
    if sed:
        found.append((sed.group("old"), sed.group("new")))
    text = _EDIT_PLACE.sub(" ", request.replace("’", "'")).strip()
    text = re.sub(r"\s+", " ", text).strip(" ,.;:!?")
    for pattern in (_EDIT_SUBSTITUTE, _EDIT_FORWARD):
        match = pattern.search(text)
        if match:
            found.append((match.group("old"), match.group("new")))
            break
    else:
        lead = _EDIT_LEAD.sub("", text)
        match = _EDIT_INSTEAD.search(lead) if " instead of " in lead.lower() else None
        match = match or _EDIT_ARROW.search(lead)
        if match:
            found.append((match.group("old"), match.group("new")))
    pairs = []
    for old, new in found:
        quoted_old, quoted_new = quoted(old), quoted(new)
        old = quoted_old[0] if quoted_old else _edit_value(old)
        new = quoted_new[0] if quoted_new else _edit_value(new)
        if old and new and old != new and len(old.split()) <= 8 and len(new.split()) <= 8:
            pairs.append((old, new))
    return list(dict.fromkeys(pairs))


def old_texts(request: str) -> list[str]:
    return _unique(old for old, _ in replacements(request))


def new_texts(request: str) -> list[str]:
    return _unique(new for _, new in replacements(request))


# Words that ask to replace a whole file, not to change a part of it
_WHOLE_FILE = re.compile(
    r"\b(?:overwrite|overwriting|rewrite|rewriting|replace (?:all of|the whole|the entire|"
    r"everything in|the contents? of)|whole file|entire file|all of its (?:text|content)|"
    r"from scratch|start over|recreate|re-create|clobber|truncate|empty)\b",
    re.IGNORECASE,
)


def asks_whole_file(request: str) -> bool:
    """Whether the request asks to replace a whole file ("overwrite notes.md with X",
    "rewrite config.ini from scratch"), not to change a part of it."""
    return bool(_WHOLE_FILE.search(request))
