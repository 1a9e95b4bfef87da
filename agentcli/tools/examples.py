"""Examples of what users ask each built-in tool for, and the arguments that serve them.

They route requests for a small local model (agentcli.providers.local.router), which
knows a tool only by its examples: a tool without any is offered but seldom chosen. Other
tools (configuration, MCP, plug-ins) bring their own as `Tool.examples`. Deliberately
other files, words and numbers than the benchmark (bench/local_model.py) uses."""

from __future__ import annotations

from typing import Any

BUILTIN_EXAMPLES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "read_file": [
        ("show me setup.py", {"path": "setup.py"}),
        ("what does main.go contain?", {"path": "main.go"}),
        ("read the file docs/intro.txt", {"path": "docs/intro.txt"}),
        ("open LICENSE", {"path": "LICENSE"}),
        ("what is in package.json?", {"path": "package.json"}),
        ("print the file setup.cfg", {"path": "setup.cfg"}),
        ("view index.html", {"path": "index.html"}),
        ("show me what is in .gitignore", {"path": ".gitignore"}),
        ("read me Dockerfile", {"path": "Dockerfile"}),
        ("open src/main.rs", {"path": "src/main.rs"}),
        ("what's inside data.csv?", {"path": "data.csv"}),
    ],
    "list_directory": [
        ("what files are in this folder?", {}),
        ("list the contents of the tests directory", {"path": "tests"}),
        ("ls", {}),
        ("show the files in lib", {"path": "lib"}),
        ("list this directory", {}),
        ("which files are here?", {}),
        ("show me the folder structure", {}),
        ("list everything in src", {"path": "src"}),
        ("what is in the build directory?", {"path": "build"}),
    ],
    "search_content": [
        ("where is the word main used?", {"pattern": "main"}),
        ("search the code for HACK", {"pattern": "HACK"}),
        ("which files contain the text password?", {"pattern": "password"}),
        ("grep for import os", {"pattern": "import os"}),
        ("find where load_config is used", {"pattern": "load_config"}),
        ("search for XXX comments", {"pattern": "XXX"}),
        ("look for the string localhost in the code", {"pattern": "localhost"}),
        ("which files import requests?", {"pattern": "import requests"}),
        ("find occurrences of deprecated", {"pattern": "deprecated"}),
        ("search for main in lib/util.js", {"pattern": "main", "path": "lib/util.js"}),
        ("grep error in logs/", {"pattern": "error", "path": "logs"}),
    ],
    "search_files": [
        ("find all the json files", {"pattern": "**/*.json"}),
        ("find files named config", {"pattern": "**/*config*"}),
        ("where are the javascript files?", {"pattern": "**/*.js"}),
        ("find all the css files", {"pattern": "**/*.css"}),
        ("locate files ending in .log", {"pattern": "**/*.log"}),
        ("are there any shell scripts?", {"pattern": "**/*.sh"}),
        ("find the rust source files", {"pattern": "**/*.rs"}),
        ("list every test file", {"pattern": "**/*test*"}),
        ("find the js files in lib", {"pattern": "**/*.js", "path": "lib"}),
    ],
    "calculator": [
        ("how much is 12 + 30 * 2?", {"expression": "12 + 30 * 2"}),
        ("what is 45/9?", {"expression": "45/9"}),
        ("compute 3 to the power of 4", {"expression": "3**4"}),
        ("calculate sqrt(144)", {"expression": "sqrt(144)"}),
        ("compute 100 - 37", {"expression": "100 - 37"}),
        ("how much is 250 / 5?", {"expression": "250 / 5"}),
        ("evaluate (2+3)*4", {"expression": "(2+3)*4"}),
        ("what is 15.5 * 3?", {"expression": "15.5 * 3"}),
    ],
    "run_shell": [
        ("run the command ls -la", {"command": "ls -la"}),
        ("execute make test", {"command": "make test"}),
        ("run python --version", {"command": "python --version"}),
        ("run git log", {"command": "git log"}),
        ("execute ./build.sh", {"command": "./build.sh"}),
        ("run the tests with pytest", {"command": "pytest"}),
        ("please run cargo build", {"command": "cargo build"}),
        # a bare command line, as typed in a shell
        ("git branch -a", {"command": "git branch -a"}),
        ("df -h", {"command": "df -h"}),
        ("whoami", {"command": "whoami"}),
        ("npm install", {"command": "npm install"}),
    ],
    "system_info": [
        ("which CPU does this computer have?", {}),
        ("how much disk space is free?", {}),
        ("what OS am I on?", {}),
        ("how much RAM is there?", {}),
        ("what kind of processor is this?", {}),
        ("how many CPUs are there?", {}),
        ("which Python version is installed?", {}),
    ],
    "fetch_url": [
        ("download https://python.org", {"url": "https://python.org"}),
        ("get the page http://localhost:8000/", {"url": "http://localhost:8000/"}),
        ("open https://docs.python.org/3/", {"url": "https://docs.python.org/3/"}),
        ("what does https://news.ycombinator.com say?", {"url": "https://news.ycombinator.com"}),
    ],
    "write_file": [
        ("write hello world to out.txt", {"path": "out.txt", "content": "hello world"}),
        ("create notes.md with the text TODO", {"path": "notes.md", "content": "TODO"}),
        ("save the word ready into state.txt", {"path": "state.txt", "content": "ready"}),
        # two arguments in other shapes: a file "containing" or "saying" its content
        # ("contain" alone reads like read_file's "what does main.go contain?")
        (
            "create a file index.js containing console.log(1)",
            {"path": "index.js", "content": "console.log(1)"},
        ),
        ("add a new file run.sh that contains echo ok", {"path": "run.sh", "content": "echo ok"}),
        (
            "make a file motd.txt saying welcome back",
            {"path": "motd.txt", "content": "welcome back"},
        ),
        ("put the line DEBUG=1 in .env", {"path": ".env", "content": "DEBUG=1"}),
        ("write the number 7 to count.txt", {"path": "count.txt", "content": "7"}),
    ],
    "edit_file": [
        (
            "in main.go, replace foo with bar",
            {"path": "main.go", "old_text": "foo", "new_text": "bar"},
        ),
        (
            "change version 1.0 to 1.1 in setup.cfg",
            {"path": "setup.cfg", "old_text": "1.0", "new_text": "1.1"},
        ),
        (
            "replace the word cat with dog in pets.txt",
            {"path": "pets.txt", "old_text": "cat", "new_text": "dog"},
        ),
        (
            "fix the typo teh to the in intro.md",
            {"path": "intro.md", "old_text": "teh", "new_text": "the"},
        ),
        (
            "edit index.html so it says Welcome instead of Hello",
            {"path": "index.html", "old_text": "Hello", "new_text": "Welcome"},
        ),
        (
            "rename the variable x to count in calc.py",
            {"path": "calc.py", "old_text": "x", "new_text": "count"},
        ),
    ],
    "create_directory": [
        ("create a folder named images", {"path": "images"}),
        ("make a new directory src/utils", {"path": "src/utils"}),
        ("add a directory called backups", {"path": "backups"}),
        ("mkdir -p data/raw", {"path": "data/raw"}),
        ("new folder docs/drafts please", {"path": "docs/drafts"}),
    ],
    "web_search": [
        ("search the web for rust tutorials", {"query": "rust tutorials"}),
        ("look up the weather in Paris online", {"query": "weather in Paris"}),
        ("google how to install node", {"query": "how to install node"}),
    ],
}
