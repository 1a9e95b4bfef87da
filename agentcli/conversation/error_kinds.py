"""A tool result's error kind (ToolCallResult metadata `errorKind`, Message.error_kind): a
module of its own so that the executor names them without importing the events."""

DENIED, INVALID, FAILED, INTERRUPTED, TIMEOUT = (
    "denied",
    "invalid",
    "failed",
    "interrupted",
    "timeout",
)
ERROR_KINDS = (DENIED, INVALID, FAILED, INTERRUPTED, TIMEOUT)
