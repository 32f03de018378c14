"""What the fault tests need: a .gltf with an external .bin and a texture (made
byte by byte so a test can break one reference), read-only mounts and small
disks made for real (as root), and the `studio` command run as a person would."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image


def write_gltf(folder: Path, name: str = "crate", buffer_uri: str | None = None,
               image_uri: str = "textures/crate.png", size: float = 0.4) -> Path:
    """A box as `<name>.gltf` naming `<name>.bin` (positions, uvs, indices) and a PNG texture."""
    folder.mkdir(parents=True, exist_ok=True)
    box = trimesh.creation.box((size, size, size))
    v = np.asarray(box.vertices, np.float32)
    uv = np.zeros((len(v), 2), np.float32)
    f = np.asarray(box.faces, np.uint32).ravel()
    blob = v.tobytes() + uv.tobytes() + f.tobytes()
    buffer_uri = buffer_uri or f"{name}.bin"
    (folder / buffer_uri).parent.mkdir(parents=True, exist_ok=True)
    if not buffer_uri.startswith(".."):
        (folder / buffer_uri).write_bytes(blob)
    tex = folder / image_uri
    tex.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), (200, 120, 40)).save(tex)
    views = [(0, v.nbytes), (v.nbytes, uv.nbytes), (v.nbytes + uv.nbytes, f.nbytes)]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2,
                                    "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
        "textures": [{"source": 0}], "images": [{"uri": image_uri}],
        "buffers": [{"uri": buffer_uri, "byteLength": len(blob)}],
        "bufferViews": [{"buffer": 0, "byteOffset": o, "byteLength": n} for o, n in views],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": len(v), "type": "VEC3",
             "min": v.min(0).tolist(), "max": v.max(0).tolist()},
            {"bufferView": 1, "componentType": 5126, "count": len(v), "type": "VEC2"},
            {"bufferView": 2, "componentType": 5125, "count": len(f), "type": "SCALAR"}],
    }
    path = folder / f"{name}.gltf"
    path.write_text(json.dumps(doc, indent=1))
    return path


STUDIO = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "studio")


def studio(*args, env: dict | None = None, timeout: float = 300):
    """Run the `studio` command as a person would; return the CompletedProcess."""
    import os
    import subprocess
    return subprocess.run([STUDIO, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def one_line(stderr: str) -> str:
    """The message a failing command gave: exactly one line, no traceback."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with its size and modification time."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


def _run(*cmd) -> "subprocess.CompletedProcess":
    import subprocess
    return subprocess.run(list(cmd), capture_output=True, text=True)


@contextlib.contextmanager
def read_only_mount(src: Path):
    """`src` seen through a read-only bind mount (as root); the test is skipped where mounting is not allowed."""
    import pytest
    target = src.parent / f"{src.name}-ro"
    target.mkdir()
    r = _run("mount", "--bind", "-o", "ro", str(src), str(target))
    if r.returncode != 0:
        target.rmdir()
        pytest.skip(f"cannot bind-mount read-only here: {r.stderr.strip()}")
    try:
        probe = _run("touch", str(target / ".probe"))
        assert probe.returncode != 0, "the read-only mount accepted a write"
        yield target
    finally:
        _run("umount", str(target))
        target.rmdir()


@contextlib.contextmanager
def small_disk(folder: Path, size_mb: float):
    """A tmpfs of `size_mb` at `folder` (as root), unmounted afterwards whatever happens."""
    import pytest
    folder.mkdir(parents=True, exist_ok=True)
    r = _run("mount", "-t", "tmpfs", "-o", f"size={int(size_mb * 1024)}k", "tmpfs", str(folder))
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield folder
    finally:
        if _run("umount", str(folder)).returncode != 0:
            _run("umount", "-l", str(folder))


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk holding `folder` up to `leave` bytes free; return the filler file."""
    import os
    filler = folder / "filler"
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(filler, "ab") as f:
        try:
            f.write(b"\0" * max(0, free - leave))
            f.flush()
        except OSError:
            pass
    return filler
