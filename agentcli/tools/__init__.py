"""Tools the model can call. Every tool, built in or loaded at run time, implements
`agentcli.tools.base.Tool` and enters through one `ToolRegistry`."""
