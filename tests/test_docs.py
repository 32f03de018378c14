"""The README and docs/ say what the studio does, and their examples are run here so they stay true.

Pages are read in the order a newcomer would (the README first, then docs/ by
name), in one working folder of the test's own, as a person would type them:

- a ```console block holds `$ command` lines, each followed by what it prints;
  every printed line given must appear in the command's output, in order,
  where `...` in a line stands for anything and a line of `...` alone for any
  number of lines;
- a ```jsonl file=NAME block is a file the page asks you to write (a calls file);
- a ```json settings block is a settings file the studio must take.

Every relative link between the pages must name a file that exists.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
LINKED = ("resources", "scripts", ".venv", "pyproject.toml")


def blocks(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(page.read_text())]


def commands(text: str) -> list[tuple[str, list[str]]]:
    """The `$ command` lines of a console block, each with the lines it is said to print."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def line_pattern(expected: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in expected.strip().split("...")))


def printed_as_said(output: str, expected: list[str]) -> str | None:
    """None if every expected line is in `output` in order; otherwise the first one that is not."""
    lines = output.splitlines()
    at = 0
    for want in expected:
        if want.strip() in ("...", ""):
            continue
        pat = line_pattern(want)
        while at < len(lines) and not pat.search(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def run_page(page: Path, folder: Path, env: dict) -> list[str]:
    """Run a page's examples in `folder`; the problems found, each naming the page and the command."""
    problems = []
    for info, text in blocks(page):
        kind, _, rest = info.partition(" ")
        if kind == "jsonl" and rest.startswith("file="):
            (folder / rest[5:]).write_text(text)
            for n, line in enumerate(text.splitlines(), 1):
                json.loads(line)                       # a calls line is one JSON object
        elif kind == "json" and rest == "settings":
            settings = folder / "settings-example.json"
            settings.write_text(text)
            done = subprocess.run([sys.executable, "-c", "from studio.store.settings import load_settings; "
                                   "from studio.store.endpoints import active_endpoint; "
                                   "print(active_endpoint(load_settings()).name)"],
                                  env={**env, "KEYPOSE_SETTINGS": str(settings)}, capture_output=True, text=True)
            if done.returncode != 0 or "bad-" in done.stderr:
                problems.append(f"{page.name}: the settings example is not taken: {done.stderr.strip()}")
        elif kind == "console":
            for command, expected in commands(text):
                done = subprocess.run(shlex.split(command), cwd=folder, env=env, capture_output=True,
                                      text=True, timeout=600)
                output = done.stdout + done.stderr
                missing = printed_as_said(output, expected)
                if missing is not None:
                    problems.append(f"{page.name}: `{command}` did not print {missing.strip()!r}; it printed:\n"
                                    f"{output[-2000:]}")
    return problems


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    for name in LINKED:
        (d / name).symlink_to(ROOT / name)
    return d


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    config = tmp_path_factory.mktemp("docs-config")
    return {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "XDG_CONFIG_HOME": str(config), "KEYPOSE_SETTINGS": str(config / "settings.json"),
            "QT_QPA_PLATFORM": "offscreen"}


@pytest.fixture(scope="module")
def readme_run(folder, env) -> list[str]:
    """The README's tour, which the other pages build on (its doorway project)."""
    return run_page(ROOT / "README.md", folder, env)


def test_the_readme_tour_runs_as_written(readme_run):
    assert not readme_run, "\n".join(readme_run)


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "README.md"], ids=lambda p: p.name)
def test_a_docs_page_runs_as_written(page, folder, env, readme_run):
    problems = run_page(page, folder, env)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_between_the_pages_names_a_file(page):
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{page.name} links to {target}, which is not there"


def test_the_readme_is_short_and_links_every_docs_page():
    text = (ROOT / "README.md").read_text()
    assert len(text) < 8000, f"the README is {len(text)} characters; the details belong in docs/"
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in text, f"the README does not link docs/{page.name}"


def test_a_console_line_must_match_what_was_printed():
    """The matcher itself: order counts, `...` stands for anything, a wrong line is named."""
    said = ["created .../out/x (fps 24, ...)", "...", "replayed 3 call(s)"]
    assert printed_as_said("created /tmp/a/out/x (fps 24, frame_start 1001)\nline\nreplayed 3 call(s)\n", said) is None
    assert printed_as_said("replayed 3 call(s)\ncreated /tmp/a/out/x (fps 24, frame_start 1001)\n", said) == "replayed 3 call(s)"
    assert printed_as_said("created /tmp/a/out/y (fps 24)\n", said) == said[0]
