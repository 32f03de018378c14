"""Example films: each module builds a project from code, scene to storyboard to motion."""
