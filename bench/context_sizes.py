"""The context each agent command needs: its prompts as the studio builds them, in tokens as
the client estimates them (3 characters a token), beside the replies' default bounds.

    .venv/bin/python bench/context_sizes.py

Measured on the doorway example (its scene replayed from its calls file, its own plan as the
planner's reply, the largest plan of the examples) and on the clipped-jamb film of
bench/real_model_jamb.jsonl (the film repair). The smallest context a command needs is its
largest request's prompt plus the reply it must hold: a probe's word, a brief, the plan
itself, a repair proposal. Nothing here talks to a model.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studio.agent.context import estimate_tokens, text_tokens  # noqa: E402
from studio.agent.endpoint_check import PROBE_TOOL  # noqa: E402
from studio.agent.loop import BUILD_TOOLS, SYSTEM as BUILD_SYSTEM  # noqa: E402
from studio.agent.planner import PLAN_SYSTEM, motion_tool_lines, scene_summary  # noqa: E402
from studio.agent.rewriters import MOTION_SYSTEM, SCENE_SYSTEM  # noqa: E402
from studio.store.endpoints import MAX_TOKENS  # noqa: E402




def main() -> int:
    from studio.scene.io import load_scene
    from studio.tools.schemas import openai_tools
    rows = []
    probe = [{"role": "system", "content": "Call the tool report_ready with ready=true."},
             {"role": "user", "content": "Are the tools reaching you?"}]
    rows.append(("agent check", "the tool probe", estimate_tokens(probe, [PROBE_TOOL]), MAX_TOKENS["probe"]))
    brief = "x" * (MAX_TOKENS["brief"] * 3)                      # a brief as long as its bound allows
    prompt = "A robot carries a wide panel through a narrow doorway and sets it down on the other side."
    rows.append(("agent plan", "the motion brief", estimate_tokens(
        [{"role": "system", "content": MOTION_SYSTEM}, {"role": "user", "content": f"Prompt: {prompt}\n\n{brief}"}]),
        MAX_TOKENS["brief"]))
    lines = (ROOT / "resources/examples/doorway/calls.jsonl").read_text().splitlines()
    upto = next(i for i, line in enumerate(lines) if json.loads(line)["tool"] == "set_plan")
    plan = json.loads(lines[upto])["arguments"]["plan"]
    with tempfile.TemporaryDirectory() as tmp:
        from studio.store.project import Project
        from studio.tools.box import ToolBox
        project = Project.create(Path(tmp) / "doorway")
        box = ToolBox(project, actor="replay")
        for line in lines[:upto]:
            c = json.loads(line)
            box.call(c["tool"], c["arguments"])
        scene = load_scene(project)
        user = (f"Prompt: {prompt}\n\nScene brief:\n{brief}\n\nMotion brief:\n{brief}\n\n{scene_summary(scene)}\n"
                f"Frame rate 24 fps; the film starts at frame 1001.\n{motion_tool_lines()}")
        plan_prompt = estimate_tokens([{"role": "system", "content": PLAN_SYSTEM}, {"role": "user", "content": user}])
        plan_reply = text_tokens(json.dumps(plan))
        rows.append(("agent plan", "the plan (doorway scene, briefs at their bound)", plan_prompt, plan_reply))
        tools = [t for t in openai_tools() if t["function"]["name"] in BUILD_TOOLS]
        task = f"Build the scene this plan needs and author its key states.\n\n{scene_summary(scene)}\n\nPlan:\n{json.dumps(plan)}"
        rows.append(("agent plan --build", "the first build turn (doorway plan, build tools)",
                     estimate_tokens([{"role": "system", "content": BUILD_SYSTEM}, {"role": "user", "content": task}],
                                     tools), MAX_TOKENS["build"]))
        project.close()
    with tempfile.TemporaryDirectory() as tmp:
        from studio.agent.model_motion_repair import SYSTEM as REPAIR_SYSTEM, _context
        from studio.repair.motion_repair import propose_film
        from studio.repair.motion_trial import FilmTrial
        from studio.store.project import Project
        from studio.tools.box import ToolBox
        project = Project.create(Path(tmp) / "jamb")
        box = ToolBox(project, actor="replay")
        for line in (ROOT / "bench/real_model_jamb.jsonl").read_text().splitlines():
            c = json.loads(line)
            box.call(c["tool"], c["arguments"])
        trial = FilmTrial(project)
        run = propose_film(project, store=False, trial=trial).runs[0]
        fitted = _context(trial, run, [])                         # everything
        smallest = None
        for budget in range(200, 20000, 50):
            try:
                _context(trial, run, [], budget=budget)
            except Exception:
                continue
            smallest = budget
            break
        rows.append(("agent repair --film", "one run, every tool's schema", text_tokens(REPAIR_SYSTEM) +
                     text_tokens(fitted), MAX_TOKENS["proposal"]))
        rows.append(("agent repair --film", "one run, fitted to the least", smallest or 0, MAX_TOKENS["proposal"]))
        project.close()
    print(f"{'command':<22} {'request':<50} {'prompt':>7} {'reply':>6} {'total':>6}")
    for cmd, what, p, r in rows:
        print(f"{cmd:<22} {what:<50} {p:>7} {r:>6} {p + r:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
