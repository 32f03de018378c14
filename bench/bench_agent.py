"""Agent speed: what a tool call costs through the model protocol, and what a
verified offline repair costs.

1. Tool calls: N set_joint calls, one per model reply, through the real OpenAI
   SDK against the scripted loopback server, each run as a command and recorded
   as a step with its checkpoint; baseline, side by side: the same N edits as
   SetPose commands on a CommandStack (no model, no steps).
2. Offline repairs on the doorway film's broken state (panel in the wall,
   elbow past its limit): proposing both verified repairs; baseline: one
   verify_state of that state (a repair is worth this many checks).
Run: .venv/bin/python bench/bench_agent.py [N]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("KEYPOSE_SETTINGS", str(ROOT / ".pytest_cache" / "no-settings.json"))

from agent_scenes import make_arm_project  # noqa: E402
from chat_server import ChatServer  # noqa: E402

from studio.agent.client import ModelClient  # noqa: E402
from studio.agent.loop import run_tools  # noqa: E402
from studio.scene.io import load_scene  # noqa: E402
from studio.scene.pose import Pose  # noqa: E402
from studio.store.project import Project  # noqa: E402
from studio.timeline.commands import CommandStack, SetPose  # noqa: E402
from studio.timeline.storyboard import State, get_state, put_state  # noqa: E402


def arm_project(folder: Path) -> Project:
    p = Project.create(folder)
    scene = make_arm_project(p)
    put_state(p, scene, State("start", 1001, Pose.rest(scene)))
    return p


def bench_tool_calls(n: int, tmp: Path) -> tuple[float, float]:
    p = arm_project(tmp / "via-model")
    script = [{"tool_calls": [{"name": "set_joint", "arguments": {"state": "start", "joint": "elbow",
                                                                  "value": 0.01 * (i + 1)}}]} for i in range(n)]
    with ChatServer([*script, {"content": "done"}]) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=10, max_retries=0)
        t0 = time.perf_counter()
        result = run_tools(p, client, "pose", max_turns=n + 1)
        via_model = (time.perf_counter() - t0) / n
    assert len(result.steps) == n and get_state(p, "start").pose.joints["elbow"] == 0.01 * n
    p.close()
    q = arm_project(tmp / "direct")
    stack = CommandStack()
    t0 = time.perf_counter()
    for i in range(n):
        pose = get_state(q, "start").pose
        pose.joints["elbow"] = 0.01 * (i + 1)
        stack.run(SetPose(q, "start", pose))
    direct = (time.perf_counter() - t0) / n
    q.close()
    return via_model, direct


def bench_offline_repair(tmp: Path) -> tuple[float, float, int]:
    from studio.agent.offline import propose_offline
    from studio.checks.run import verify_state
    from studio.examples.doorway import create
    p = create(tmp / "doorway")
    scene = load_scene(p)
    pose = Pose.rest(scene)
    pose.roots["panel"] = [-0.25, 1.5, 1.0, 1.0, 0.0, 0.0, 0.0]
    pose.joints["elbow_l"] = 0.4
    put_state(p, scene, State("carry", 1001, pose))
    verify_state(p, "carry")                      # warm the shape caches for both figures
    t0 = time.perf_counter()
    verify_state(p, "carry")
    one_check = time.perf_counter() - t0
    t0 = time.perf_counter()
    proposals, _ = propose_offline(p, "carry")
    propose = time.perf_counter() - t0
    p.close()
    return propose, one_check, len(proposals)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        via_model, direct = bench_tool_calls(n, tmp)
        print(f"tool call via the model protocol + step checkpoint: {via_model * 1000:7.1f} ms/call  ({n} calls)")
        print(f"baseline, the same edit as a direct command:        {direct * 1000:7.1f} ms/call")
        print(f"ratio (model round trip / direct):                  {via_model / direct:7.1f}x")
        propose, one_check, count = bench_offline_repair(tmp)
        print(f"offline repair, {count} verified proposals for the doorway state: {propose * 1000:7.1f} ms")
        print(f"baseline, one verify_state of that state:                 {one_check * 1000:7.1f} ms")
        print(f"ratio (proposals / one check):                            {propose / one_check:7.1f}x")


if __name__ == "__main__":
    main()
