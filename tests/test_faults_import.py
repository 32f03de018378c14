"""A .gltf import brings everything or nothing: the .gltf with every buffer and
image it names lands in the project, so the scene stands on its own once the
source is gone; a missing or outside reference adds nothing at all."""
from __future__ import annotations

import shutil
import stat

from faults_files import one_line, snapshot, studio, write_gltf


def test_a_gltf_with_a_bin_and_a_texture_is_copied_whole(tmp_path):
    project = tmp_path / "p"
    assert studio("new", project).returncode == 0
    source = write_gltf(tmp_path / "src")
    out = studio("scene", "import", project, source, "--name", "crate", "--at", "0", "0", "0.2")
    assert out.returncode == 0, out.stderr
    assert "12 triangles, watertight yes, size 0.400 x 0.400 x 0.400 m" in out.stdout
    [gltf] = (project / "assets" / "gltf").glob("*/crate.gltf")
    bundle = gltf.parent
    for rel in ("crate.gltf", "crate.bin", "textures/crate.png"):
        assert (bundle / rel).read_bytes() == (source.parent / rel).read_bytes(), rel
        assert stat.S_IMODE((bundle / rel).stat().st_mode) == 0o644
    shutil.rmtree(source.parent)                   # the source moves away: the project keeps working
    info = studio("info", project)
    assert info.returncode == 0 and f"crate                  rigid   assets/gltf/{bundle.name}/crate.gltf" in info.stdout
    build = studio("scene", "build", project)
    assert build.returncode == 0 and "1 of 1 watertight" in build.stdout
    assert studio("board", "status", project).returncode == 0


def test_a_missing_bin_adds_nothing(tmp_path):
    project = tmp_path / "p"
    assert studio("new", project).returncode == 0
    source = write_gltf(tmp_path / "src")
    (source.parent / "crate.bin").unlink()
    before = snapshot(project)
    out = studio("scene", "import", project, source, "--name", "crate")
    assert out.returncode == 2
    line = one_line(out.stderr)
    assert "buffers[0].uri names 'crate.bin', which is missing" in line and str(source) in line
    assert snapshot(project) == before
    assert "bodies   0" in studio("info", project).stdout


def test_a_reference_outside_the_gltf_folder_is_refused_and_nothing_added(tmp_path):
    project = tmp_path / "p"
    assert studio("new", project).returncode == 0
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"\0" * 304)
    source = write_gltf(tmp_path / "src", buffer_uri="../secret.bin")
    before = snapshot(project)
    out = studio("scene", "import", project, source, "--name", "crate")
    assert out.returncode == 2
    assert "buffers[0].uri '../secret.bin' points outside" in one_line(out.stderr)
    assert snapshot(project) == before

    source = write_gltf(tmp_path / "src", name="linked")      # a link leading out is outside too
    (source.parent / "link.png").symlink_to(secret)
    source.write_text(source.read_text().replace("textures/crate.png", "link.png"))
    out = studio("scene", "import", project, source, "--name", "crate")
    assert out.returncode == 2 and "images[0].uri 'link.png' points outside" in one_line(out.stderr)
    assert snapshot(project) == before
