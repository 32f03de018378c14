"""`studio tools [--json]`: the tool catalogue a person, the agent and a calls
file share (name, description, parameter schema), then the motion tools a
plan segment may name, with the schemas of their parameters."""
from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser("tools", help="the tool catalogue: every edit a person, the agent or a calls file can make")
    p.add_argument("--json", action="store_true", help="name, description and parameter schema of each tool")
    p.set_defaults(func=cmd_tools)


def _fields(schema: dict) -> str:
    req = set(schema.get("required", []))
    return ", ".join(f"{k}{'*' if k in req else ''}" for k in schema.get("properties", {})) or "(none)"


def cmd_tools(args) -> int:
    from studio.tools.schemas import catalogue, motion_catalogue
    tools, motion = catalogue(), motion_catalogue()
    if args.json:
        json.dump({"tools": [{"name": n, "description": d, "parameters": p} for n, (d, p) in tools.items()],
                   "motion_tools": [{"name": n, "description": d, "parameters": p} for n, (d, p) in motion.items()]},
                  sys.stdout, indent=1)
        print()
        return 0
    for n, (d, p) in tools.items():
        print(f"{n:<18} {d}\n{'':<18} arguments: {_fields(p)}")
    print("\nmotion tools (a plan segment's tool, run by author_segment and studio bake)")
    for n, (d, p) in motion.items():
        print(f"{n:<18} {d}\n{'':<18} params: {_fields(p)}")
    print("\n* required")
    return 0
