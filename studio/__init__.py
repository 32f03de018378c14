"""Keypose Studio: human-in-the-loop 4D generation, pose to pose."""

__version__ = "0.1.0"
