"""Running commands so that none is ever left behind: process trees, clean environments,
bounded output capture, background jobs."""
