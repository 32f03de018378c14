"""The repair search: runs of failing frames, candidate fixes (tool parameters,
other tools, key states), trials on scratch copies, the batch loop. It calls no
model; the model's proposals come from `studio.agent` and are tried here alike."""
