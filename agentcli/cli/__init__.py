"""The command line: the app, its options and help, completion scripts, where a prompt comes
from, and the commands."""
