"""The one edit layer: every edit of a project, by a person in the window, by the
agent, or by a replayed calls file, is a tool call here (a JSON schema, one
command on the undo stack, one audit row)."""
