"""What the CLI's subcommands do, kept out of cli.py so that it stays a thin layer."""
