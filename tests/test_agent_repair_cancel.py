"""Proposing repairs stops when the person cancels: proposals verified before then stay,
the failures not yet tried are neither proposed for nor called unsolved."""
from __future__ import annotations

import json

from chat_server import ChatServer
from studio.agent.client import ModelClient
from studio.agent.model_repair import propose_with_model
from studio.repair.offline import propose_offline
from studio.repair.proposals import list_proposals
from studio.agent.steps import list_steps
from studio.scene.pose import Pose
from studio.timeline.commands import SetPose
from studio.timeline.storyboard import get_state
from ui_scenes import add_boxes


class Watch:
    """What a worker gives a plain function: progress in, a cancel flag out; cancels at the
    progress report numbered `cancel_at` (1-based), like a person pressing Cancel then."""

    def __init__(self, cancel_at: int | None = None):
        self.cancel_at, self.seen, self.cancelled = cancel_at, [], False

    def progress(self, fraction: float, message: str = "") -> None:
        self.seen.append((fraction, message))
        if self.cancel_at is not None and len(self.seen) >= self.cancel_at:
            self.cancelled = True


def two_failures(project) -> None:
    """s1: the crate 0.15 m inside the post and the shoulder 0.3 rad past its upper limit."""
    add_boxes(project, states=2)
    SetPose(project, "s1", Pose({"crate": [0.7, 1.0, 0, 1, 0, 0, 0], "post": [1, 1, 0, 1, 0, 0, 0]},
                                {"shoulder": 1.8})).do()


def test_offline_proposing_reports_progress_per_failure_and_runs_to_the_end(tmp_project):
    two_failures(tmp_project)
    watch = Watch()
    made, unsolved = propose_offline(tmp_project, "s1", state=watch)
    assert sorted(p.check_name for p in made) == ["JointLimits", "NoPenetration"] and unsolved == []
    fractions = [f for f, _ in watch.seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and len(fractions) == 3
    assert watch.seen[0][1] == "checking s1"
    assert {m.split()[0] for _, m in watch.seen[1:]} == {"JointLimits", "NoPenetration"}


def test_offline_cancel_keeps_the_first_proposal_and_tries_no_more(tmp_project):
    two_failures(tmp_project)
    watch = Watch(cancel_at=3)        # pressed while the second failure's candidates are about to be tried
    made, unsolved = propose_offline(tmp_project, "s1", state=watch)
    assert len(made) == 1 and unsolved == []
    assert [p.id for p in list_proposals(tmp_project)] == [made[0].id]
    assert made[0].verified["ok"]
    watch = Watch(cancel_at=1)        # pressed before any failure was tried
    made, unsolved = propose_offline(tmp_project, "s1", state=watch)
    assert made == [] and unsolved == [] and len(list_proposals(tmp_project)) == 1


def test_cancel_stops_the_model_mid_reply_and_proposes_nothing(tmp_project):
    two_failures(tmp_project)
    good = {"summary": "clamp", "changes": [{"kind": "joint", "name": "shoulder", "to": 1.4}]}
    with ChatServer([{"content": json.dumps(good), "stall": 0.3}] * 4) as chat:
        client = ModelClient(chat.base_url, "scripted", None, timeout=10, max_retries=0)
        watch = Watch(cancel_at=2)    # pressed while the model is asked about the first failure
        made, unsolved = propose_with_model(tmp_project, client, "s1", state=watch)
        assert made == [] and unsolved == []
        assert len(chat.requests) == 1                  # the second failure was never asked about
    assert list_proposals(tmp_project) == []
    assert get_state(tmp_project, "s1").pose.joints["shoulder"] == 1.8
    step = list_steps(tmp_project)[-1]
    assert step["action"] == "propose repairs" and step["detail"]["cancelled"] is True


def test_cancelling_a_film_repair_search_keeps_what_was_found(tmp_path):
    """The jamb film: the whole search finds a proposal; cancelled at once, it tries nothing."""
    from motion_films import jamb_film
    from studio.repair.motion_repair import propose_film
    project = jamb_film(tmp_path / "jamb")
    watch = Watch(cancel_at=1)                 # pressed while the film as it is was being verified
    made = propose_film(project, state=watch)
    assert made.proposals == [] and made.unsolved == [] and made.tried == 0 and made.runs
    assert list_proposals(project) == []
    watch = Watch()
    made = propose_film(project, state=watch)
    assert made.proposals and watch.seen[0] == (0.0, "verifying the film as it is")
    assert len(watch.seen) == len(made.runs) + 1
