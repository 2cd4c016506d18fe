"""The store API for static Turing tests (Zhang et al.): mixed into `Store` (store/api.py).

A static study (`static_studies`, config `game.static_config.StaticStudy`) holds stimuli (what
the judge sees first: cue word, image, transcript source) and responses (the items judged: a
response to one stimulus, its ground truth `human|machine` and the agent that produced it).
Judges are ordinary `participants` rows (consent, Prolific ids, demographics). A judge session
is the balanced sample one judge was dealt (fixed when created, so a link can resume it);
judge trials are append-only (triggers refuse UPDATE and DELETE).

    with Store(url) as st:
        sid = st.register_static_study(preset_study("w", "word"))
        st.add_items(sid, [StimulusIn("come")], [ResponseIn("come/0", "come", "together", "human", "p1")])
        judge = st.create_participant(label="judge-1", consent_ms=now_ms())
        sess = st.start_judge_session(sid, judge, seed=1)         # -> JudgeSessionInfo (plan)
        item = st.items(sid, ids=[sess.items[0].response_id])[0]  # what to show
        st.append_trials(sid, [TrialIn(judge, item.id, seq=0, answer="human", rt_ms=1800,
                                       session_id=sess.id)])
        st.trials(sid)                                            # -> [TrialInfo]

Every method is one transaction and returns frozen dataclasses. Item lists for other tools
(AI judges, the judge pages): `items(study_id)`; each `ItemInfo` carries its stimulus.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy.exc import IntegrityError

from turinglab.game.static_config import StaticStudy, static_hash
from turinglab.store.db import StoreError, UnknownId, now_ms
from turinglab.store.versions import register_versioned
from turinglab.store.models import (
    JudgeSessionRow,
    JudgeTrialRow,
    ParticipantRow,
    ResponseRow,
    StaticStudyRow,
    StimulusRow,
)
from turinglab.store.textcheck import check_import

TRUTHS = ("human", "machine")


class BadImportText(StoreError):
    """Text an import cannot store (NUL, lone surrogate, too long): `lines`, one per field."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        shown = lines[:20] + ([f"... and {len(lines) - 20} more"] if len(lines) > 20 else [])
        super().__init__(f"{len(lines)} text problem(s), nothing imported:\n" + "\n".join(shown))


@dataclass(frozen=True)
class StaticStudyInfo:
    id: int
    name: str
    version: int
    task: str
    config_hash: str
    study: StaticStudy
    created_ms: int


@dataclass(frozen=True)
class StimulusIn:
    """A stimulus to add: `key` is the source's id (cue word, image id, transcript name)."""

    key: str
    text: str | None = None
    image: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)  # e.g. {"point": [x, y]}, {"topic_choices": [...]}


@dataclass(frozen=True)
class ResponseIn:
    """An item to add, for the stimulus with key `stimulus_key`; `key` is unique in the study."""

    key: str
    stimulus_key: str
    text: str | None
    truth: str  # human | machine
    agent: str  # participant label or model name, as in the source data
    payload: dict[str, Any] = field(default_factory=dict)
    control: bool = False  # a vigilance item with a known answer


@dataclass(frozen=True)
class ItemInfo:
    """One judgeable item: the response with its stimulus."""

    id: int
    key: str
    text: str | None
    payload: dict[str, Any]
    truth: str
    agent: str
    control: bool
    stimulus_id: int
    stimulus_key: str
    stimulus_text: str | None
    stimulus_image: str | None
    stimulus_fields: dict[str, Any]


@dataclass(frozen=True)
class TrialIn:
    """A judge's answer to one item. `seq` numbers the judge's trials in this study from 0."""

    judge_id: str
    response_id: int
    seq: int
    answer: str  # human | machine
    rt_ms: int | None = None
    phase: str = "test"  # feedback | test (or the source's phase name)
    feedback_shown: bool = False
    answers: dict[str, Any] = field(default_factory=dict)  # speakers, gender, control answer ("control": ...)
    t_ms: int | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class TrialInfo:
    id: int
    judge_id: str
    response_id: int
    seq: int
    phase: str
    answer: str
    answers: dict[str, Any]
    rt_ms: int | None
    feedback_shown: bool
    control_correct: bool | None
    t_ms: int
    session_id: str | None
    study_hash: str


@dataclass(frozen=True)
class JudgeIn:
    """A judge to create with an import (a new `participants` row; `label` is the source's id)."""

    label: str
    demographics: dict[str, Any] = field(default_factory=dict)
    prolific_pid: str | None = None
    consent_ms: int | None = None


@dataclass(frozen=True)
class ImportTrial:
    """A published trial: judge by label, item by response key; otherwise as `TrialIn`."""

    judge: str
    response_key: str
    seq: int
    answer: str
    rt_ms: int | None = None
    phase: str = "test"
    feedback_shown: bool = False
    answers: dict[str, Any] = field(default_factory=dict)
    t_ms: int | None = None


@dataclass(frozen=True)
class PlannedItem:
    response_id: int
    phase: str  # feedback | test
    control: bool = False


@dataclass(frozen=True)
class JudgeSessionInfo:
    id: str
    study_id: int
    judge_id: str
    items: tuple[PlannedItem, ...]
    created_ms: int
    completed_ms: int | None
    done: int  # trials stored so far (the next item to show is items[done])


class StaticMixin:
    """Static-test methods of `Store` (uses its `_tx()` and `create_participant`)."""

    # --- studies ---

    def register_static_study(self, study: StaticStudy, *, new_version: bool = False) -> int:
        """The id of `study`: the row with this name and config, else a new one. The same name and
        version under another config is updated while it has no trials; with trials it is frozen
        (`StudyFrozen`, or with `new_version=True` a new row with the next free version)."""
        try:
            return self._register_static(study, new_version)
        except IntegrityError:  # registered concurrently
            return self._register_static(study, new_version)

    def _register_static(self, study: StaticStudy, new_version: bool) -> int:
        with self._tx() as s:
            return _register(s, study, new_version)

    def import_static(self, study: StaticStudy, stimuli: Sequence[StimulusIn], responses: Sequence[ResponseIn],
                      judges: Sequence[JudgeIn] = (), trials: Sequence[ImportTrial] = ()) -> int:
        """Register `study` and store its items, judges (new participants) and their trials in ONE
        transaction: all or nothing. The study must have no items yet. Returns the study id.
        Every text field is checked first (`textcheck.check_import`): `BadImportText` names them."""
        bad = check_import(study.name, stimuli, responses, judges, trials)
        if bad:
            raise BadImportText(bad)
        with self._tx() as s:
            sid = _register(s, study, False)
            if s.scalar(select(func.count()).select_from(ResponseRow).where(ResponseRow.study_id == sid)):
                raise StoreError(f"static study {study.name!r} already has items; import into a new --study name "
                                 "(nothing was stored)")
            _add_items(s, sid, stimuli, responses)
            pids: dict[str, str] = {}
            t0 = now_ms()
            for j in judges:
                pid = "p" + secrets.token_hex(8)
                s.add(ParticipantRow(id=pid, label=j.label, prolific_pid=j.prolific_pid, prolific_study_id=None,
                                     prolific_session_id=None, consent_ms=j.consent_ms, demographics=dict(j.demographics),
                                     created_ms=t0))
                pids[j.label] = pid
            s.flush()
            rid = dict(s.execute(select(ResponseRow.key, ResponseRow.id).where(ResponseRow.study_id == sid)).all())
            _append_trials(s, sid, [TrialIn(pids[t.judge], rid[t.response_key], t.seq, t.answer, rt_ms=t.rt_ms,
                                            phase=t.phase, feedback_shown=t.feedback_shown, answers=dict(t.answers),
                                            t_ms=t.t_ms) for t in trials])
            return sid


    def static_studies(self) -> list[StaticStudyInfo]:
        with self._tx() as s:
            return [_study_info(r) for r in s.scalars(select(StaticStudyRow).order_by(StaticStudyRow.id))]

    def static_study(self, ref: int | str) -> StaticStudyInfo:
        """By id, or by name (the highest version)."""
        with self._tx() as s:
            if isinstance(ref, int) or str(ref).isdigit():
                row = s.get(StaticStudyRow, int(ref))
            else:
                row = s.scalars(select(StaticStudyRow).where(StaticStudyRow.name == ref)
                                .order_by(StaticStudyRow.version.desc())).first()
            if row is None:
                known = ", ".join(r.name for r in s.scalars(select(StaticStudyRow))) or "none yet"
                raise UnknownId(f"no static study {ref!r} (static studies: {known}); "
                                "create one with `turinglab static import`")
            return _study_info(row)

    # --- items ---

    def add_items(self, study_id: int, stimuli: Sequence[StimulusIn], responses: Sequence[ResponseIn]) -> tuple[int, int]:
        """Add stimuli and responses in one transaction (all or nothing). A response may name a
        stimulus added earlier. Returns (stimuli added, responses added)."""
        with self._tx() as s:
            _add_items(s, study_id, stimuli, responses)
        return len(stimuli), len(responses)

    def items(self, study_id: int, *, ids: Iterable[int] | None = None) -> list[ItemInfo]:
        """The study's items (responses with their stimuli), by id."""
        q = (select(ResponseRow, StimulusRow).join(StimulusRow, ResponseRow.stimulus_id == StimulusRow.id)
             .where(ResponseRow.study_id == study_id).order_by(ResponseRow.id))
        if ids is not None:
            q = q.where(ResponseRow.id.in_(list(ids)))
        with self._tx() as s:
            return [ItemInfo(r.id, r.key, r.text, dict(r.payload), r.truth, r.agent, r.control, st.id, st.key,
                             st.text, st.image, dict(st.fields)) for r, st in s.execute(q).all()]

    # --- judges and trials ---

    def append_trials(self, study_id: int, trials: Sequence[TrialIn]) -> int:
        """Append judge trials in one transaction (all or nothing); returns how many.

        Each judge's `seq` must continue their trials in this study; the item must belong to the
        study. A control item's `control_correct` is `answer == truth`; an item whose stimulus has
        `fields["control_answer"]` (e.g. the conversation's topic) compares `answers["control"]`;
        the colour/object true/false question compares `answers["object_answer"]` with
        `answers["object_truth"]` (yes|no: whether the word asked about is in the image).
        """
        with self._tx() as s:
            return _append_trials(s, study_id, trials)

    def trials(self, study_id: int, *, judge_id: str | None = None) -> list[TrialInfo]:
        q = select(JudgeTrialRow).where(JudgeTrialRow.study_id == study_id).order_by(JudgeTrialRow.id)
        if judge_id is not None:
            q = q.where(JudgeTrialRow.judge_id == judge_id)
        with self._tx() as s:
            return [TrialInfo(r.id, r.judge_id, r.response_id, r.seq, r.phase, r.answer, dict(r.answers), r.rt_ms,
                              r.feedback_shown, r.control_correct, r.t_ms, r.session_id, r.study_hash)
                    for r in s.scalars(q)]

    # --- judge sessions ---

    def start_judge_session(self, study_id: int, judge_id: str, *, seed: int | None = None,
                            items: Sequence[ItemInfo] | None = None,
                            study: StaticStudy | None = None) -> JudgeSessionInfo:
        """Deal `judge_id` a balanced sample (see `plan_session`) and store it; an open session of
        this judge in this study is returned instead (a resumed link gets the same items).
        `items`/`study`: the study's items and config when the caller holds them (the judge pages
        cache them), so planning does not re-read every item."""
        with self._tx() as s:
            existing = s.scalars(select(JudgeSessionRow).where(JudgeSessionRow.study_id == study_id,
                                                               JudgeSessionRow.judge_id == judge_id)
                                 .order_by(JudgeSessionRow.created_ms)).first()
        if existing is not None:
            return self.judge_session(existing.id)
        cfg = study if study is not None else self.static_study(study_id).study
        plan = plan_session(items if items is not None else self.items(study_id), cfg, random.Random(seed))
        sid = "s" + secrets.token_hex(8)
        try:
            with self._tx() as s:
                if s.get(ParticipantRow, judge_id) is None:
                    raise UnknownId(f"no participant with id {judge_id!r}")
                s.add(JudgeSessionRow(id=sid, study_id=study_id, judge_id=judge_id, created_ms=now_ms(),
                                      completed_ms=None, plan={"items": [
                                          {"response_id": p.response_id, "phase": p.phase, "control": p.control}
                                          for p in plan]}))
        except IntegrityError:  # another process dealt this judge a session first (unique, 0003): use it
            with self._tx() as s:
                sid = s.scalar(select(JudgeSessionRow.id).where(JudgeSessionRow.study_id == study_id,
                                                                JudgeSessionRow.judge_id == judge_id))
            if sid is None:
                raise
        return self.judge_session(sid)

    def judge_session(self, session_id: str) -> JudgeSessionInfo:
        with self._tx() as s:
            row = s.get(JudgeSessionRow, session_id)
            if row is None:
                raise UnknownId(f"no judge session {session_id!r}")
            done = s.scalar(select(func.count()).select_from(JudgeTrialRow).where(  # via the (study, judge, seq) index
                JudgeTrialRow.study_id == row.study_id, JudgeTrialRow.judge_id == row.judge_id,
                JudgeTrialRow.session_id == session_id))
            items = tuple(PlannedItem(int(p["response_id"]), p["phase"], bool(p.get("control")))
                          for p in row.plan["items"])
            return JudgeSessionInfo(row.id, row.study_id, row.judge_id, items, row.created_ms, row.completed_ms, done)


def _register(s: Any, study: StaticStudy, new_version: bool) -> int:
    def frozen(n: int, stored: str, next_free: int) -> str:
        return (f"static study {study.name!r} version {study.version} already has {n} judge trial(s) under "
                f"config {stored[:12]}; raise `version:` in the study file "
                f"(next free: {next_free}) or pass --new-version")

    return register_versioned(s, StaticStudyRow, JudgeTrialRow, study, new_version, static_hash, frozen,
                              task=study.task)


def _add_items(s: Any, study_id: int, stimuli: Sequence[StimulusIn], responses: Sequence[ResponseIn]) -> None:
    for r in responses:
        if r.truth not in TRUTHS:
            raise StoreError(f"response {r.key!r}: truth must be human or machine, got {r.truth!r}")
    if s.get(StaticStudyRow, study_id) is None:
        raise UnknownId(f"no static study with id {study_id}")
    try:
        for i in range(0, len(stimuli), 5000):
            s.execute(insert(StimulusRow), [{"study_id": study_id, "key": x.key, "text": x.text, "image": x.image,
                                             "fields": dict(x.fields)} for x in stimuli[i:i + 5000]])
        ids = dict(s.execute(select(StimulusRow.key, StimulusRow.id).where(StimulusRow.study_id == study_id)).all())
        missing = sorted({r.stimulus_key for r in responses} - set(ids))
        if missing:
            raise StoreError(f"response(s) name unknown stimulus {missing[0]!r} ({len(missing)} unknown); "
                             "add the stimulus first; nothing was stored")
        for i in range(0, len(responses), 5000):
            s.execute(insert(ResponseRow), [
                {"study_id": study_id, "stimulus_id": ids[r.stimulus_key], "key": r.key, "text": r.text,
                 "payload": dict(r.payload), "truth": r.truth, "agent": r.agent, "control": r.control}
                for r in responses[i:i + 5000]])
    except IntegrityError as exc:
        raise StoreError(f"items could not be stored ({str(exc.orig).splitlines()[0]}); a stimulus or "
                         "response key is already in this study; nothing was stored") from None


def _ids(name: str) -> Any:
    return bindparam(name, expanding=True)


# the statements of `_append_trials`, built once: it runs for every batch of judge answers, and
# building and ORM-executing them cost more than the database's own work
_Q_STUDY_HASH = select(StaticStudyRow.config_hash).where(StaticStudyRow.id == bindparam("study"))
_Q_ITEMS = (select(ResponseRow.id, ResponseRow.truth, ResponseRow.control, StimulusRow.fields)
            .join(StimulusRow, ResponseRow.stimulus_id == StimulusRow.id)
            .where(ResponseRow.study_id == bindparam("study"), ResponseRow.id.in_(_ids("ids"))))
_Q_KNOWN = select(ParticipantRow.id).where(ParticipantRow.id.in_(_ids("judges")))
_Q_LAST_SEQ = (select(JudgeTrialRow.judge_id, func.max(JudgeTrialRow.seq))
               .where(JudgeTrialRow.study_id == bindparam("study"), JudgeTrialRow.judge_id.in_(_ids("judges")))
               .group_by(JudgeTrialRow.judge_id))
_INSERT_TRIALS = JudgeTrialRow.__table__.insert()
_Q_OPEN_SESSIONS = select(JudgeSessionRow.id, JudgeSessionRow.plan).where(
    JudgeSessionRow.id.in_(_ids("ids")), JudgeSessionRow.completed_ms.is_(None))
_Q_SESSION_COUNTS = (select(JudgeTrialRow.session_id, func.count())  # through the (study, judge, seq) index
                     .where(JudgeTrialRow.study_id == bindparam("study"), JudgeTrialRow.judge_id.in_(_ids("judges")),
                            JudgeTrialRow.session_id.in_(_ids("ids")))
                     .group_by(JudgeTrialRow.session_id))
_COMPLETE_SESSIONS = (JudgeSessionRow.__table__.update().where(JudgeSessionRow.__table__.c.id.in_(_ids("ids")))
                      .values(completed_ms=bindparam("t")))


def _append_trials(s: Any, study_id: int, trials: Sequence[TrialIn]) -> int:
    if not trials:
        return 0
    conn = s.connection()  # Core statements on the session's transaction
    study_hash = conn.execute(_Q_STUDY_HASH, {"study": study_id}).scalar()
    if study_hash is None:
        raise UnknownId(f"no static study with id {study_id}")
    rids = sorted({t.response_id for t in trials})
    items: dict[int, tuple[str, bool, dict[str, Any]]] = {}
    for chunk in (rids[i:i + 500] for i in range(0, len(rids), 500)):
        items.update((i, (truth, ctl, f)) for i, truth, ctl, f in
                     conn.execute(_Q_ITEMS, {"study": study_id, "ids": chunk}).all())
    judges = sorted({t.judge_id for t in trials})
    known = set(conn.execute(_Q_KNOWN, {"judges": judges}).scalars())
    last = dict(conn.execute(_Q_LAST_SEQ, {"study": study_id, "judges": judges}).all())
    nxt = {j: (last[j] + 1 if j in last else 0) for j in judges}
    t0 = now_ms()
    rows = []
    for t in trials:
        if t.judge_id not in known:
            raise UnknownId(f"no participant with id {t.judge_id!r}; judges are participants "
                            "(Store.create_participant); nothing was stored")
        if t.response_id not in items:
            raise UnknownId(f"no item {t.response_id} in static study {study_id}; nothing was stored")
        if t.answer not in TRUTHS:
            raise StoreError(f"trial {t.judge_id}/{t.seq}: answer must be human or machine, "
                             f"got {t.answer!r}; nothing was stored")
        if t.seq != nxt[t.judge_id]:
            raise StoreError(f"judge {t.judge_id}: trial seq {t.seq} does not continue their trials "
                             f"(expected {nxt[t.judge_id]}); nothing was stored")
        nxt[t.judge_id] += 1
        truth, ctl, fields = items[t.response_id]
        correct = None
        if ctl:
            correct = t.answer == truth
        elif "control_answer" in fields and "control" in t.answers:
            correct = t.answers["control"] == fields["control_answer"]
        elif t.answers.get("object_truth") in ("yes", "no") and "object_answer" in t.answers:
            correct = t.answers["object_answer"] == t.answers["object_truth"]  # colour/object true/false question
        rows.append({"study_id": study_id, "judge_id": t.judge_id, "session_id": t.session_id,
                     "response_id": t.response_id, "seq": t.seq, "phase": t.phase, "answer": t.answer,
                     "answers": dict(t.answers), "rt_ms": t.rt_ms, "feedback_shown": t.feedback_shown,
                     "control_correct": correct, "t_ms": t.t_ms if t.t_ms is not None else t0,
                     "study_hash": study_hash})
    try:
        for i in range(0, len(rows), 5000):
            conn.execute(_INSERT_TRIALS, rows[i:i + 5000])
    except IntegrityError as exc:
        raise StoreError(f"trials could not be stored ({str(exc.orig).splitlines()[0]}); "
                         "was the same trial sent twice? nothing was stored") from None
    _complete_sessions(conn, study_id, trials, t0)
    return len(rows)


def _complete_sessions(conn: Any, study_id: int, trials: Sequence[TrialIn], t_ms: int) -> None:
    """Mark the open sessions of `trials` that now hold every planned item completed: two or three
    statements per batch, the counts read through the (study, judge, seq) index, never a table scan."""
    ids = sorted({t.session_id for t in trials if t.session_id})
    if not ids:
        return
    open_ = dict(conn.execute(_Q_OPEN_SESSIONS, {"ids": ids}).all())
    if not open_:
        return
    judges = sorted({t.judge_id for t in trials if t.session_id in open_})
    done = dict(conn.execute(_Q_SESSION_COUNTS, {"study": study_id, "judges": judges, "ids": sorted(open_)}).all())
    full = [i for i, plan in open_.items() if done.get(i, 0) >= len((plan or {}).get("items", []))]
    if full:
        conn.execute(_COMPLETE_SESSIONS, {"ids": full, "t": t_ms})


def plan_session(items: Sequence[ItemInfo], study: StaticStudy, rng: random.Random) -> list[PlannedItem]:
    """A judge's items: `feedback_items` then `items` non-control items, each phase half human
    (`human_share`) and half machine with the machine items spread evenly over the agents (the
    remainder to randomly chosen agents), no stimulus twice in the session, `control_items`
    vigilance items placed at random positions of the test phase, order random within a phase.
    Raises StoreError when the study has too few items."""
    cfg = study.session
    pool = [i for i in items if not i.control]
    controls = [i for i in items if i.control]
    used: set[int] = set()
    out: list[PlannedItem] = []
    for phase, n in (("feedback", cfg.feedback_items), ("test", cfg.items)):
        if n == 0:
            continue
        n_h = round(n * cfg.human_share)
        quotas: dict[tuple[str, str], int] = {("human", "*"): n_h}
        agents = sorted({i.agent for i in pool if i.truth == "machine"})
        n_m = n - n_h
        if n_m and not agents:
            raise StoreError(f"static study {study.name!r} has no machine items to deal {n_m} of")
        extra = set(rng.sample(agents, n_m % len(agents))) if agents else set()
        for a in agents:
            quotas[("machine", a)] = n_m // len(agents) + (a in extra)
        groups = {k: [i for i in pool if (i.truth, "*" if i.truth == "human" else i.agent) == k] for k in quotas}
        for g in groups.values():
            rng.shuffle(g)
        chosen: list[ItemInfo] = []
        # fill the scarcest group first: most likely to run out of unused stimuli
        for k in sorted(quotas, key=lambda k: len(groups[k]) - quotas[k]):
            got = 0
            for i in groups[k]:
                if got == quotas[k]:
                    break
                if i.stimulus_id not in used:
                    used.add(i.stimulus_id)
                    chosen.append(i)
                    got += 1
            if got < quotas[k]:
                who = "human items" if k[0] == "human" else f"items of agent {k[1]!r}"
                raise StoreError(f"static study {study.name!r}: not enough {who} on distinct stimuli for a session "
                                 f"({got} of {quotas[k]}); lower session.items or add items")
        rng.shuffle(chosen)
        planned = [PlannedItem(i.id, phase) for i in chosen]
        if phase == "test" and cfg.control_items:
            if len(controls) < cfg.control_items:
                raise StoreError(f"static study {study.name!r} needs {cfg.control_items} control items, has {len(controls)}")
            for c in rng.sample(controls, cfg.control_items):
                planned.insert(rng.randrange(len(planned) + 1), PlannedItem(c.id, phase, control=True))
        out.extend(planned)
    return out


def _study_info(r: StaticStudyRow) -> StaticStudyInfo:
    return StaticStudyInfo(r.id, r.name, r.version, r.task, r.config_hash, StaticStudy.model_validate(r.config),
                           r.created_ms)


# --- added for the judge pages (server/judging/pages.py): every session of a study, for /admin ---

def _judge_sessions(self: StaticMixin, study_id: int) -> list[JudgeSessionInfo]:
    """Every judge session of the study, oldest first, with its stored trial count (`done`)."""
    with self._tx() as s:  # type: ignore[attr-defined]
        done = dict(s.execute(select(JudgeTrialRow.session_id, func.count()).where(
            JudgeTrialRow.study_id == study_id, JudgeTrialRow.session_id.is_not(None))
            .group_by(JudgeTrialRow.session_id)).all())
        rows = s.scalars(select(JudgeSessionRow).where(JudgeSessionRow.study_id == study_id)
                         .order_by(JudgeSessionRow.created_ms, JudgeSessionRow.id)).all()
        return [JudgeSessionInfo(r.id, r.study_id, r.judge_id,
                                 tuple(PlannedItem(int(p["response_id"]), p["phase"], bool(p.get("control")))
                                       for p in r.plan["items"]), r.created_ms, r.completed_ms, done.get(r.id, 0))
                for r in rows]


StaticMixin.judge_sessions = _judge_sessions  # type: ignore[attr-defined]
