"""The workspace: its root and path resolution, opening what was checked, what is sensitive,
what changed."""
