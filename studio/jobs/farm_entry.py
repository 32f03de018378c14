"""The farm side of a job: runs as a Ray job's entrypoint, on the cluster.

It splits the spec's frames into chunks, renders each chunk in a Ray task on
a node with a `blender` resource (the task runs the Blender worker as a
subprocess that dies with it), prints the workers' JSON progress lines to
the job log as chunks finish, then runs the remaining steps (encode, .blend,
stills) once every frame is there. Exit 0 only if every part succeeded.
Only this module imports Ray; the studio reaches it over HTTP.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the Blender child: receive SIGKILL when the Ray worker that started it dies."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def run_worker(command: list[str], spec_path: str) -> tuple[int, list[str]]:
    """Run the Blender worker on one spec; return its exit code and its JSON lines."""
    proc = subprocess.run([*command, spec_path], cwd=str(Path(spec_path).parent), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
    return proc.returncode, [line for line in proc.stdout.splitlines() if line.startswith("{")]


def _stopped(*_) -> None:
    """Ray stops a job with SIGTERM: unwind so the chunk tasks are cancelled."""
    raise KeyboardInterrupt


def chunks(frames: list[int], size: int) -> list[list[int]]:
    return [frames[i:i + size] for i in range(0, len(frames), max(1, size))]


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    import ray

    p = argparse.ArgumentParser(prog="farm_entry")
    p.add_argument("spec")
    p.add_argument("--worker", required=True, help="the worker command line, as a JSON list")
    p.add_argument("--chunk", type=int, default=4)
    args = p.parse_args(argv)
    command = json.loads(args.worker)
    spec_path = Path(args.spec)
    spec = json.loads(spec_path.read_text())
    folder = spec_path.parent

    signal.signal(signal.SIGTERM, _stopped)
    ray.init(address="auto", log_to_driver=False)
    task = ray.remote(num_cpus=1, resources={"blender": 1}, max_retries=0)(run_worker)
    steps = list(spec.get("steps", []))
    pending = {}
    if "frames" in steps:
        frames = spec.get("frames") or list(range(spec["frame_start"], spec["frame_end"] + 1))
        for k, part in enumerate(chunks(frames, args.chunk)):
            sub = dict(spec, steps=["frames"], frames=part, marker=f"done-chunk-{k}.json")
            path = folder / f"spec-chunk-{k}.json"
            write_json(path, sub)
            pending[task.remote(command, str(path))] = k
        print(json.dumps({"stage": "farm", "message": f"{len(frames)} frames in {len(pending)} chunks"}), flush=True)
    failed = []
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            k = pending.pop(ready[0])
            code, lines = ray.get(ready[0])
            for line in lines:
                print(line, flush=True)
            if code != 0:
                failed.append(k)
                break
        if failed:
            print(json.dumps({"stage": "error", "message": f"frame chunk {failed[0]} failed"}), flush=True)
            return 1
        rest = [s for s in steps if s != "frames"]
        final = dict(spec, steps=rest, frames=[])
        path = folder / "spec-final.json"
        write_json(path, final)
        code, lines = ray.get(task.remote(command, str(path)))
        for line in lines:
            print(line, flush=True)
        return code
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        print(json.dumps({"stage": "error", "message": "stopped"}), flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
