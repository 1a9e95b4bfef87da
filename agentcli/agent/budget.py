"""The steps a run may take, shared by an agent and the subagents it starts, so that
`--max-steps` bounds the whole: each model request takes one from the budget it was given
and from every budget above it. A subagent's own limit (its definition's) is a budget of
its own inside its parent's."""

from __future__ import annotations


class StepBudget:
    def __init__(self, limit: int, parent: StepBudget | None = None) -> None:
        self.limit = limit
        self.parent = parent
        self.used = 0

    def start(self) -> None:
        """A new run of the agent that owns this budget: nothing used yet."""
        self.used = 0

    def take(self) -> bool:
        """One more model request, if this budget and every one above it have one left."""
        if self.used >= self.limit:
            return False
        if self.parent is not None and not self.parent.take():
            return False
        self.used += 1
        return True

    @property
    def spent(self) -> bool:
        """No step is left here or above (a subagent that stopped for this stops its
        parent too)."""
        return self.used >= self.limit or (self.parent is not None and self.parent.spent)
