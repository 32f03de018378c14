"""The agent: a model reached through the OpenAI SDK that plans, builds and
repairs only through the studio's tools, every change a command a person can
undo and every step a checkpoint that can be reverted."""
