"""Where a library has no public way to do what agentcli needs, the need lives here: one
small module per library part, each pinned by tests/test_adapters.py so that the library's
next change fails a test instead of breaking without a word. Nothing else in agentcli uses
a library's underscore names (tests/test_private_reach.py)."""
