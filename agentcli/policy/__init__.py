"""The risk policy: shell command classification (`shell_parse`, `shell_risk`, the read-only
table), rules (`rules`), remembered choices and decisions (`engine`). Import from the
module that holds a name: this package imports nothing, so that a module below it (the
neutral `agentcli.risk`) can name a type of one of its modules without a circle."""
