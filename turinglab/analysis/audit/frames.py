"""What the interrogator's browser received, rebuilt from a game's event log (docs/protocol.md),
and turned into features per witness conversation for the blinding audit (`audit.py`).

The server sends the interrogator, before the verdict: `state` (at the start, when the chat
closes, on a reconnect), `ack` (its own message accepted), `typing` (a witness's indicator turns
on), `message` (a witness reply shown) and `error` (its own action refused, with a code). Each of
these is an event of the log, at the time the frame went out (every change is stored before
anyone sees it). Frames the log does not hold (`pong`, `bad_frame`, `rate_limited`,
`server_error`, `store_unavailable`: the hub's, never about a witness) are not rebuilt.

Two feature families: `CHANNEL` (frame types, counts, codes and times: nothing of the text),
and `CONTENT` (reply length and apparent typing speed), which the audit reports separately.
The designed delay grows with the reply's length (base_s + s_per_char·n + ...), so a witness kind
that writes longer replies is slower by design, and its text shows that anyway: the channel's
reply delays and typing-indicator durations are taken *at equal length*, as residuals of one
straight line on the reply's characters fitted to every reply of the study (no labels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from turinglab.game import events as ev
from turinglab.game.events import INTERROGATOR, Event

# key sets of the frames as docs/protocol.md defines them (the same for both witness kinds)
KEYS = {
    "state": ("game", "lone", "participant", "phase", "server_now_ms", "type", "waiting_since_ms"),
    "ack": ("client_id", "id", "t_ms", "type"),
    "message": ("conv", "from", "id", "t_ms", "text", "type"),
    "typing": ("conv", "type"),
    "error": ("client_id", "code", "message", "type"),
}

# feature -> what it measures (one row of the report's feature table)
CHANNEL = {
    "replies": "witness replies shown",
    "delay_first_s": "delay of the first reply after its question, beyond its length's (s)",
    "delay_median_s": "median reply delay after the question, beyond its length's (s)",
    "delay_min_s": "shortest reply delay, beyond its length's (s)",
    "delay_max_s": "longest reply delay, beyond its length's (s)",
    "delay_sd_s": "SD of the reply delays beyond their lengths' (s)",
    "typing_onset_median_s": "median time from the question to the typing indicator (s)",
    "typing_onset_max_s": "longest time from the question to the typing indicator (s)",
    "typing_shown_median_s": "median time the typing indicator showed before the reply, beyond its length's (s)",
    "typing_shown_min_s": "shortest time the typing indicator showed before a reply, beyond its length's (s)",
    "replies_without_typing": "replies shown with no typing indicator before them",
    "typing_without_reply": "typing indicator on, no reply, when the chat closed (0/1)",
    "unanswered_at_close": "a question still unanswered when the chat closed (0/1)",
    "state_frames": "state frames before the verdict",
    "chat_closed_s": "time from the start to the chat closing, before the verdict (s)",
    "closed_by_witness_left": "the chat closed because a witness left (0/1)",
    "errors": "error frames (refusals of the interrogator's actions)",
}
CONTENT = {
    "reply_chars_mean": "mean reply length (characters)",
    "reply_chars_max": "longest reply (characters)",
    "reply_words_mean": "mean reply length (words)",
    "chars_per_s_median": "median apparent typing speed: reply characters per second of delay",
}
ERROR_PREFIX = "error_"  # + code: error frames of one code (a channel feature when the data has it)


@dataclass(frozen=True)
class Frame:
    """One frame to the interrogator: its time, type, key set, the conversation it is about (known
    from the log even where the frame has no `conv` key) and its non-text values."""

    t_ms: int
    type: str
    conv: str | None = None
    keys: tuple[str, ...] = ()
    values: dict = field(default_factory=dict)


def interrogator_frames(events: list[Event]) -> list[Frame]:
    """The frames the interrogator received before the verdict (or the game's end without one)."""
    out: list[Frame] = []

    def add(t: int, typ: str, conv: str | None = None, **values) -> None:
        out.append(Frame(int(t), typ, conv, KEYS[typ], values))

    open_ = True
    for e in events:
        witness = e.actor in ev.WITNESS_SEATS
        if e.type == ev.GAME_STARTED:
            add(e.t_ms, "state", phase="game")
        elif e.type == ev.MESSAGE and e.actor == INTERROGATOR:
            add(e.t_ms, "ack", e.conversation or "A")
        elif e.type == ev.MESSAGE and witness:
            text = str(e.payload.get("text", ""))
            add(e.t_ms, "message", e.conversation or e.actor, chars=len(text), words=len(text.split()))
        elif e.type == ev.TYPING and witness:
            add(e.t_ms, "typing", e.conversation or e.actor)
        elif e.type == ev.REFUSED and e.actor == INTERROGATOR:
            add(e.t_ms, "error", e.conversation, code=str(e.payload.get("code")))
        elif e.type == ev.TIME_UP and open_:
            open_ = False
            add(e.t_ms, "state", phase="verdict", closed="time_up")
        elif e.type == ev.LEFT and witness and open_:
            open_ = False
            add(e.t_ms, "state", phase="verdict", closed="witness_left")
        elif e.type == ev.RECONNECTED and e.actor == INTERROGATOR:
            add(e.t_ms, "state", phase="game" if open_ else "verdict")
        elif e.type in (ev.VERDICT, ev.GAME_ENDED):
            break  # the reveal comes after: not part of the blinding
    return out


def _stat(values: list[float], how: str) -> float:
    if not values:
        return np.nan
    a = np.asarray(values, dtype=float) / 1000.0
    return float({"median": np.median, "min": np.min, "max": np.max,
                  "sd": lambda x: np.std(x, ddof=1) if len(x) > 1 else np.nan}[how](a))


def replies(frames: list[Frame]) -> list[tuple[int, int | None, int]]:
    """(delay ms, typing-indicator ms or None, characters) of every reply that followed a question."""
    out = []
    for conv in {fr.conv for fr in frames if fr.type == "message"}:
        q_t = typing_t = None
        for fr in frames:
            if fr.conv != conv:
                continue
            if fr.type == "ack":
                q_t, typing_t = fr.t_ms, None
            elif fr.type == "typing":
                typing_t = fr.t_ms
            elif fr.type == "message":
                if q_t is not None:
                    out.append((fr.t_ms - q_t, None if typing_t is None else fr.t_ms - typing_t, fr.values["chars"]))
                q_t = typing_t = None
    return out


@dataclass(frozen=True)
class LengthLine:
    """ms = a + b·characters for the reply delay (`delay`) and the typing indicator (`shown`)."""

    delay: tuple[float, float] = (0.0, 0.0)
    shown: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def fit(cls, rows: list[tuple[int, int | None, int]]) -> "LengthLine":
        def line(pairs):
            if len(pairs) < 3 or len({n for _, n in pairs}) < 2:
                return (float(np.mean([v for v, _ in pairs])) if pairs else 0.0, 0.0)
            v, n = np.array(pairs, dtype=float).T
            b, a = np.polyfit(n, v, 1)
            return (float(a), float(b))
        return cls(line([(d, n) for d, _, n in rows]), line([(s, n) for _, s, n in rows if s is not None]))


def conversation_features(frames: list[Frame], conv: str, started_ms: int,
                          line: LengthLine = LengthLine()) -> dict[str, float]:
    """The channel and content features of conversation `conv` (plus `error_<code>` counts);
    delays and indicator durations less `line` (the default: none)."""
    q_t = typing_t = None
    delays, onsets, shown, chars, words, speeds = [], [], [], [], [], []
    no_typing = 0
    for fr in frames:
        if fr.conv != conv or fr.type not in ("ack", "typing", "message"):
            continue
        if fr.type == "ack":
            q_t, typing_t = fr.t_ms, None
        elif fr.type == "typing":
            if q_t is not None:
                onsets.append(fr.t_ms - q_t)
            typing_t = fr.t_ms
        else:
            chars.append(fr.values["chars"])
            words.append(fr.values["words"])
            n = fr.values["chars"]
            if q_t is not None:
                delays.append(fr.t_ms - q_t - line.delay[0] - line.delay[1] * n)
                if fr.t_ms > q_t:
                    speeds.append(1000.0 * fr.values["chars"] / (fr.t_ms - q_t))
            if typing_t is None:
                no_typing += 1
            else:
                shown.append(fr.t_ms - typing_t - line.shown[0] - line.shown[1] * n)
            q_t = typing_t = None
    states = [fr for fr in frames if fr.type == "state"]
    closed = next((fr for fr in states if fr.values.get("closed")), None)
    errors = [fr for fr in frames if fr.type == "error" and fr.conv in (conv, None)]
    out = {
        "replies": float(len(chars)),
        "delay_first_s": delays[0] / 1000.0 if delays else np.nan,
        "delay_median_s": _stat(delays, "median"), "delay_min_s": _stat(delays, "min"),
        "delay_max_s": _stat(delays, "max"), "delay_sd_s": _stat(delays, "sd"),
        "typing_onset_median_s": _stat(onsets, "median"), "typing_onset_max_s": _stat(onsets, "max"),
        "typing_shown_median_s": _stat(shown, "median"), "typing_shown_min_s": _stat(shown, "min"),
        "replies_without_typing": float(no_typing),
        "typing_without_reply": float(typing_t is not None),
        "unanswered_at_close": float(q_t is not None),
        "state_frames": float(len(states)),
        "chat_closed_s": (closed.t_ms - started_ms) / 1000.0 if closed else np.nan,
        "closed_by_witness_left": float(bool(closed and closed.values["closed"] == "witness_left")),
        "errors": float(len(errors)),
        "reply_chars_mean": float(np.mean(chars)) if chars else np.nan,
        "reply_chars_max": float(np.max(chars)) if chars else np.nan,
        "reply_words_mean": float(np.mean(words)) if words else np.nan,
        "chars_per_s_median": float(np.median(speeds)) if speeds else np.nan,
    }
    for fr in errors:
        key = ERROR_PREFIX + fr.values["code"]
        out[key] = out.get(key, 0.0) + 1.0
    return out


@dataclass(frozen=True)
class GameLog:
    game_id: str
    format: str
    interrogator_id: str
    started_ms: int
    seats: dict  # seat -> (kind, witness codename or "Human")
    events: list[Event]
    bot: bool = False


def feature_table(games: list[GameLog]) -> pd.DataFrame:
    """One row per game and witness seat: ids, the seat's kind, and every feature (errors of a code
    the game did not have are 0); delays at equal length (`LengthLine` fitted to all replies)."""
    rows, frames = [], {g.game_id: interrogator_frames(g.events) for g in games}
    line = LengthLine.fit([r for f in frames.values() for r in replies(f)])
    for g in games:
        for seat, (kind, witness) in sorted(g.seats.items()):
            rows.append({"game_id": g.game_id, "format": g.format, "interrogator_id": g.interrogator_id,
                         "seat": seat, "witness_kind": kind, "witness": witness, "bot": g.bot,
                         **conversation_features(frames[g.game_id], seat, g.started_ms, line)})
    df = pd.DataFrame(rows)
    for c in [c for c in df.columns if c.startswith(ERROR_PREFIX)]:
        df[c] = df[c].fillna(0.0)
    return df


def channel_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in CHANNEL if c in df.columns] + sorted(c for c in df.columns if c.startswith(ERROR_PREFIX))


def content_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in CONTENT if c in df.columns]


def describe(feature: str) -> str:
    if feature.startswith(ERROR_PREFIX):
        return f"error frames with code {feature[len(ERROR_PREFIX):]}"
    return CHANNEL.get(feature) or CONTENT.get(feature) or feature


def sample_interrogators(infos: list, max_games: int | None, seed: int = 0) -> tuple[list, str]:
    """At most `max_games` games, drawn as whole interrogators in a seeded random order (so the audit's
    interrogator bootstrap and permutations stay valid for the sample), and a sentence saying so."""
    if max_games is None or len(infos) <= max_games:
        return infos, ""
    import numpy as np

    by: dict[str, list] = {}
    for g in infos:
        by.setdefault(str(g.interrogator_id), []).append(g)
    order = sorted(by)  # sorted ids, then a seeded shuffle: the same sample from the same store
    keep: list = []
    for i in np.random.default_rng(seed).permutation(len(order)):
        if len(keep) + len(by[order[i]]) > max_games and keep:
            continue
        keep += by[order[i]]
        if len(keep) >= max_games:
            break
    chosen = {id(g) for g in keep}
    return ([g for g in infos if id(g) in chosen],
            f"audited a seeded sample of {len(keep):,} of the {len(infos):,} games (whole interrogators drawn at "
            f"random, seed {seed}, up to {max_games:,} games); its AUROC interval and tests are the sample's own")


def load_games(url: str | None, study: str | int | None, max_games: int | None = None,
               seed: int = 0) -> tuple[object, list[GameLog], str]:
    """The study (StudyInfo), its stored games whose seats have a known kind, with their logs (at most
    `max_games`, a seeded sample of interrogators: `sample_interrogators`), and the sampling note.
    Games and seats are read as plain rows (two queries), the sample drawn, and only its events read."""
    from types import SimpleNamespace

    from sqlalchemy import select

    from turinglab.analysis.live.load import is_demo, read_study
    from turinglab.store.api import readable
    from turinglab.store.models import EventRow, GameRow, GameSeatRow

    with read_study(url, study) as (store, info):
        with store.engine.connect() as conn:
            seats: dict[str, dict] = {}
            q = (select(GameSeatRow.game_id, GameSeatRow.seat, GameSeatRow.kind, GameSeatRow.witness)
                 .join(GameRow, GameRow.id == GameSeatRow.game_id).where(GameRow.study_id == info.id))
            for gid, seat, kind, witness in conn.execute(q):
                seats.setdefault(gid, {})[seat] = (kind, witness if kind == "ai" else "Human")
            q = (select(GameRow.id, GameRow.format, GameRow.interrogator_id, GameRow.started_ms, GameRow.flags)
                 .where(GameRow.study_id == info.id).order_by(GameRow.started_ms, GameRow.id))
            infos = [SimpleNamespace(id=gid, format=fmt, interrogator_id=who, started_ms=t, flags=flags or {},
                                     seats=dict(sorted(seats[gid].items())))
                     for gid, fmt, who, t, flags in conn.execute(q)
                     if seats.get(gid) and not is_demo(flags) and all(k in ("human", "ai") for k, _ in seats[gid].values())]
        infos, note = sample_interrogators(infos, max_games, seed)
        logs: dict[str, list[Event]] = {g.id: [] for g in infos}
        ids = list(logs)
        with store.engine.connect() as conn:
            for i in range(0, len(ids), 500):
                q = (select(EventRow.game_id, EventRow.seq, EventRow.t_ms, EventRow.type, EventRow.actor,
                            EventRow.conversation, EventRow.payload)
                     .where(EventRow.game_id.in_(ids[i:i + 500])).order_by(EventRow.game_id, EventRow.seq))
                for gid, seq, t, typ, actor, conv, payload in conn.execute(q):
                    logs[gid].append(Event(seq, t, typ, actor, conv, readable(dict(payload or {}))))
        games = [GameLog(g.id, g.format, g.interrogator_id, g.started_ms, g.seats, logs[g.id],
                         bool(g.flags.get("bot"))) for g in infos]
        return info, games, note
