"""Sessions: every run and chat is an append-only JSONL file that survives crashes, and can
be continued, listed, shown, exported and removed."""
