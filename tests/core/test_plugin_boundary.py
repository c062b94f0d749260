"""Where a judge really runs binds its licence, and a plug-in kind is checked at the boundary (issue 45): the
resolved endpoint (a base URL, or OPENAI_BASE_URL) and a plug-in's distribution and version are in the fingerprint
and the method; a plug-in's scores are checked, and one that hangs or breaks its protocol stops the job cleanly."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import kinds
from rageval_desktop.core.judges.fingerprint import changed, fingerprint
from rageval_desktop.core.judges.kinds import LocalKind, Scored
from rageval_desktop.core.judges.registry import add_judge, get_judge, update_judge
from tests.support.fake_openai import FakeOpenAI
from tests.support.plugin_kinds import registered


class Scripted(LocalKind):
    """A plug-in kind whose scores a test scripts: `script[i]` is the i-th item's score, "hang" or "raise"."""
    name = "scripted"
    label = "scripted scores for tests"
    reads_passages = False

    def __init__(self) -> None:
        self.script: list = []

    def score(self, project, judge, targets):
        for i, _ in enumerate(targets):
            step = self.script[i % len(self.script)] if self.script else 3
            if step == "hang":
                time.sleep(30)
            if step == "raise":
                raise ZeroDivisionError("the plug-in divided by zero")
            if step == "short":
                return
            yield Scored(step, "scripted")


@pytest.fixture
def scripted():
    with registered(Scripted()) as kind:
        yield kind


@pytest.fixture
def proj(small):
    return small


def _statuses(project):
    return project.reader().execute("SELECT status, error_kind, score, raw_output FROM judgments ORDER BY run_row_id"
                                    ).fetchall()


@pytest.mark.parametrize("bad", [99, 0.5, "five", math.inf, -math.inf, math.nan, 1e308, True, None])
def test_a_plug_in_score_off_the_scale_or_not_a_number_is_an_error_row(proj, scripted, bad):
    scripted.script = [4, bad]
    add_judge(proj, "s", "correctness", "scripted")
    stats = run_judge_job(proj, JobSpec(run="v1", judges=["s"]))
    rows = _statuses(proj)
    assert [r[0] for r in rows] == ["ok", "error"] * 3 and stats.ok == 3
    assert all(r[2] == 4.0 for r in rows if r[0] == "ok")
    assert all(r[1] == "bad_score" and r[2] is None and "score" in r[3] for r in rows if r[0] == "error")
    from rageval_desktop.core.metrics.dashboard import dashboard

    assert dashboard(proj, "v1")     # the metrics read what was stored (a text score used to break them)


@pytest.mark.parametrize(("step", "said"), [("raise", "ZeroDivisionError: the plug-in divided by zero"),
                                            ("short", "returned 0 verdicts for 6 items"),
                                            ("hang", "gave no verdict in 0.5 s")])
def test_a_plug_in_that_raises_hangs_or_skips_items_stops_the_job_with_a_message(proj, scripted, step, said):
    scripted.script = [step]
    add_judge(proj, "s", "correctness", "scripted", params={"timeout": 0.5})
    began = time.monotonic()
    stats = run_judge_job(proj, JobSpec(run="v1", judges=["s"]))
    assert time.monotonic() - began < 10
    assert stats.stopped == "fatal" and said in stats.message and "acme-judges 0.1" in stats.message
    status = proj.reader().execute("SELECT status, message FROM jobs ORDER BY id DESC").fetchone()
    assert status[0] == "failed" and said in status[1]


def test_a_new_plug_in_version_is_a_new_method_and_expires_the_licence(proj, scripted):
    scripted.script = [4]
    judge = add_judge(proj, "s", "correctness", "scripted")
    before = fingerprint(proj, judge)
    assert before["plug-in"] == "acme-judges 0.1"
    assert run_judge_job(proj, JobSpec(run="v1", judges=["s"])).ok == 6
    kinds._VERSIONS["scripted"] = "0.2"
    now = fingerprint(proj, get_judge(proj, "s"))
    assert changed(before, now) == ["plug-in", "model"]
    again = run_judge_job(proj, JobSpec(run="v1", judges=["s"]))
    assert (again.skipped, again.ok) == (0, 6)                # the old version's verdicts are not this one's


def test_an_older_fingerprint_without_the_new_parts_is_not_a_change(proj):
    judge = add_judge(proj, "gpt", "correctness", "llm", model="m", base_url="http://127.0.0.1:9/v1")
    now = fingerprint(proj, judge)
    old = {k: v for k, v in now.items() if k not in ("endpoint", "plug-in")}
    assert changed(old, now) == []
    assert changed({**now, "endpoint": "http://a/v1"}, now) == ["endpoint"]


def test_a_new_base_url_expires_the_licence(proj):
    judge = add_judge(proj, "gpt", "correctness", "llm", model="m", base_url="http://127.0.0.1:9/v1")
    before = fingerprint(proj, judge)
    moved = update_judge(proj, "gpt", base_url="http://127.0.0.1:10/v1")
    assert changed(before, fingerprint(proj, moved)) == ["endpoint"]


def test_a_judge_without_a_base_url_records_where_openai_base_url_sent_it(proj, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test-DO-NOT-STORE-4f9a8b7c6d5e")
    judge = add_judge(proj, "gpt", "correctness", "llm", model="gpt-4o-mini", api_key_ref="JUDGE_KEY",
                      params={"timeout": 2.0})
    before = fingerprint(proj, judge)
    assert before["endpoint"] == "https://api.openai.com/v1"
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        stats = run_judge_job(proj, JobSpec(run="v1", judges=["gpt"]))
        assert stats.ok == 6 and len(server.requests) == 6          # the calls went to OPENAI_BASE_URL's server
    now = fingerprint(proj, get_judge(proj, "gpt"))
    assert now["endpoint"] == server.url and changed(before, now) == ["endpoint"]
    audit = proj.reader().execute("SELECT details FROM audit_log WHERE action = 'judge endpoint'").fetchone()
    assert json.loads(audit[0])["endpoint"] == server.url and json.loads(audit[0])["via"] == "OPENAI_BASE_URL"
    params = json.loads(proj.reader().execute("SELECT params FROM jobs ORDER BY id DESC").fetchone()[0])
    assert params["endpoints"] == {"gpt": server.url}
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert fingerprint(proj, get_judge(proj, "gpt"))["endpoint"] == server.url   # not this process's environment


def test_cache_keys_follow_openai_base_url_and_keep_the_default_ones(monkeypatch):
    from rageval_desktop.core.judges import llm

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    default = llm.cache_key(None, "m", [{"role": "user", "content": "x"}], {})
    legacy = json.dumps({"base_url": "", "model": "m", "messages": [{"role": "user", "content": "x"}], "params": {}},
                        sort_keys=True, ensure_ascii=False)
    import hashlib

    assert default == hashlib.sha256(legacy.encode()).hexdigest()     # the keys stored so far still hit
    monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere:8000/v1")
    assert llm.cache_key(None, "m", [{"role": "user", "content": "x"}], {}) != default
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:sk-secretsecretsecret1234@host:8000/v1?key=abc")
    assert llm.endpoint_label(None) == "http://host:8000/v1"


def test_a_model_judge_of_another_kind_is_estimated_and_edited_as_one(proj):
    """The dry run asks the kind whether it calls a model (it said "no calls" for a pinned LLM kind while its own
    JSON counted the calls), and so does the judges list the app's Edit button reads."""
    from rageval_desktop.core.jobs.estimate import describe, estimate
    from rageval_desktop.core.judges.kinds.llm import LLMKind
    from rageval_desktop.core.judges.registry import judge_summary

    class Pinned(LLMKind):
        name = "llm_pinned"

    kinds._discover()
    kinds.register(Pinned(), source="acme-judges", version="1.0")
    try:
        add_judge(proj, "p", "correctness", "llm_pinned", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
        est = estimate(proj, JobSpec(run="v1", judges=["p"]))
        assert est["calls"] == 6
        text = describe(est)
        assert "6 calls" in text and "no calls" not in text
        assert judge_summary(get_judge(proj, "p"))["calls_llm"] is True
    finally:
        for table in (kinds._KINDS, kinds._SOURCES, kinds._VERSIONS):
            table.pop("llm_pinned", None)


class Broken(LocalKind):
    """A plug-in kind that fails wherever it is asked something."""
    name = "broken"
    label = "fails everywhere"

    def __init__(self, where: str) -> None:
        self.where = where

    def can_judge(self, spec):
        if self.where == "can_judge":
            raise KeyError("spec")
        return None

    def check(self, project, settings):
        if self.where == "check":
            raise ValueError("bad settings")
        return settings if self.where != "check_returns" else {"oops": 1}

    def model_id(self, judge):
        if self.where == "model_id":
            raise RuntimeError("no id")
        return "broken:1"

    def outside_parts(self, judge):
        if self.where == "outside_parts":
            raise OSError("folder gone")
        return {}


@pytest.mark.parametrize(("where", "said"), [("can_judge", "failed while saying which metrics it judges: KeyError"),
                                             ("check", "failed while checking the judge's settings: ValueError"),
                                             ("check_returns", "returned dict, not Settings")])
def test_a_plug_in_that_fails_when_a_judge_is_added_is_named(proj, where, said):
    from rageval_desktop.core.base.errors import JudgeConfigError

    kinds._discover()
    kinds.register(Broken(where), source="acme-broken", version="0.0.1")
    try:
        with pytest.raises(JudgeConfigError, match=said):
            add_judge(proj, "b", "correctness", "broken")
    finally:
        for table in (kinds._KINDS, kinds._SOURCES, kinds._VERSIONS):
            table.pop("broken", None)


@pytest.mark.parametrize("where", ["model_id", "outside_parts"])
def test_a_plug_in_that_fails_to_name_its_method_stops_the_job_and_leaves_the_list_readable(proj, where):
    from rageval_desktop.core.base.errors import JudgeConfigError
    from rageval_desktop.core.review.licence import licence

    kind = Broken("none")
    kinds._discover()
    kinds.register(kind, source="acme-broken", version="0.0.1")
    try:
        add_judge(proj, "b", "correctness", "broken")
        kind.where = where
        judge = get_judge(proj, "b")
        assert licence(proj, judge).tier == "explore"              # readable, whatever the plug-in does
        if where == "model_id":
            with pytest.raises(JudgeConfigError, match="failed while naming its method: RuntimeError: no id"):
                run_judge_job(proj, JobSpec(run="v1", judges=["b"]))
        else:
            assert "could not be read" in fingerprint(proj, judge)["outside"]
    finally:
        for table in (kinds._KINDS, kinds._SOURCES, kinds._VERSIONS):
            table.pop("broken", None)


def test_a_plug_in_that_puts_a_key_in_the_settings_it_returns_is_refused(proj):
    """What a kind's check returns is stored as it is: a plug-in that copied a key into the settings would have
    stored it in the project."""
    import dataclasses

    from rageval_desktop.core.base.errors import JudgeConfigError

    class Leaky(Scripted):
        name = "leaky"

        def check(self, project, settings):
            return dataclasses.replace(settings, params={**settings.params, "api_key": "sk-proj-abcdef1234567890XYZ"})

    with registered(Leaky()):
        with pytest.raises(JudgeConfigError, match="the settings judge kind 'leaky' returned may not hold 'api_key'"):
            add_judge(proj, "s", "correctness", "leaky")
    assert proj.reader().execute("SELECT COUNT(*) FROM judges WHERE name = 's'").fetchone()[0] == 0


class HangsNaming(Scripted):
    """A plug-in kind that answers scoring but hangs when asked to name its method (or what it depends on)."""
    name = "hangs-naming"

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self.released = threading.Event()       # set by the test when it is done: until then the call hangs

    def model_id(self, judge):
        if self.where == "model_id":
            self.released.wait(60)
        return "hangs-naming v1"

    def outside_parts(self, judge):
        if self.where == "outside_parts":
            self.released.wait(60)
        return {}


@pytest.mark.parametrize("where", ["model_id", "outside_parts"])
def test_a_plug_in_that_hangs_outside_scoring_ends_the_job_within_its_limit(proj, monkeypatch, where):
    """Issue 74: a plug-in kind hanging in a call other than `score` (naming its method, what its verdicts depend
    on) held the job in 'running' past 90 s: only scoring had a time limit."""
    from rageval_desktop.core.base.errors import RagevalError

    monkeypatch.setenv("RAGEVAL_PLUGIN_LIMIT_S", "0.5")
    kind = HangsNaming(where)
    with registered(kind):
        add_judge(proj, "h", "correctness", "hangs-naming")
        try:
            stats = run_judge_job(proj, JobSpec(run="v1", judges=["h"]))
            said = stats.message or ""
        except RagevalError as exc:              # refused before it started: as clear
            stats, said = None, str(exc)
        assert not kind.released.is_set()         # the job ended while the plug-in still hung: its limit, no clock
        if where == "outside_parts":             # only the fingerprint asks it: named there, the job judged
            said = fingerprint(proj, get_judge(proj, "h"))["outside"]
            assert stats is not None and stats.ok == 6
        else:
            assert stats is None or stats.stopped == "fatal"
    kind.released.set()
    assert "gave no answer in 0.5 s" in said and "hangs-naming" in said and "acme-judges 0.1" in said
    assert not proj.reader().execute("SELECT 1 FROM jobs WHERE status = 'running'").fetchall()
