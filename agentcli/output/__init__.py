"""Front ends that consume the event stream: plain or rendered text, JSON, JSONL."""
