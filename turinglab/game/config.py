"""Study configuration: validated models, presets and the canonical hash.

A study is one YAML file: format, rules, witnesses, allocation and exclusion flags.
Its canonical hash is stored with every game, so a study is frozen once it has games.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Format = Literal["two-player", "three-player"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timing(_Strict):
    """Human-like reply delay of an AI witness (SPEC §1).

    delay = base_s + s_per_char * n_chars + Gamma(gamma_shape, gamma_scale)
            [+ read_s_per_char * n_chars of the previous message]
    The model's own latency is absorbed into the delay, never added on top.
    """

    base_s: Annotated[float, Field(ge=0)] = 1.0
    s_per_char: Annotated[float, Field(ge=0)] = 0.3
    gamma_shape: Annotated[float, Field(gt=0)] = 2.5
    gamma_scale: Annotated[float, Field(gt=0)] = 0.25
    read_s_per_char: Annotated[float, Field(ge=0)] = 0.0
    max_s: Annotated[float | None, Field(gt=0)] = None


class Rules(_Strict):
    """Rules of one game. Defaults are the Jones & Bergen (2023) numbers."""

    time_limit_s: Annotated[float, Field(gt=0)] = 300.0
    max_chars: Annotated[int, Field(gt=0)] = 300
    max_messages: Annotated[int | None, Field(gt=0)] = None  # per side per conversation
    interrogator_first: bool = True
    strict_alternation: bool = True
    block_paste: bool = True
    # typing indicator appears typing_min_s + U(0, typing_jitter_s) after the interrogator's message
    typing_min_s: Annotated[float, Field(ge=0)] = 2.0
    typing_jitter_s: Annotated[float, Field(ge=0)] = 3.0
    confidence_min: int = 0
    confidence_max: int = 100
    # seconds the interrogator has to give the verdict once time is up, and to come back after
    # leaving (closed tab, lost connection); past it the game ends (`verdict_timeout`, `abandoned`)
    # and frees its witness. None = no limit (a left game then waits for a restart)
    verdict_grace_s: Annotated[float | None, Field(gt=0)] = 60.0
    # a human witness's reply: "relay" shows it as typed (Jones & Bergen; the presets);
    # "equalised" holds it to `human_witness_delay`, the AI delay formula, so that reply timing
    # cannot tell the witnesses apart (a blinding choice of its own, see docs/protocol.md)
    human_witness_timing: Literal["relay", "equalised"] = "equalised"
    human_witness_delay: Timing = Timing()
    # belief tracking (issue 29): after each witness reply the interrogator may move a slider, two-player
    # "human <-> AI", three-player "which is human, A <-> B"; each move is a `belief` event. Off: the
    # published protocol. Nothing of it reaches a witness
    belief_tracking: bool = False

    @model_validator(mode="after")
    def _confidence_scale(self) -> "Rules":
        if self.confidence_min >= self.confidence_max:
            raise ValueError(f"confidence_min ({self.confidence_min}) must be below confidence_max "
                             f"({self.confidence_max}), e.g. 0 and 100, or -100 and 100")
        return self

    @property
    def directional(self) -> bool:
        """A scale with a negative end (e.g. -100..100) measures a direction, not a strength:
        the negative end is "sure A is the human" (two-player: "sure it is an AI"), the positive
        end "sure B is the human" ("sure it is a human"), 0 undecided; the verdict's choice is
        the side the slider is on."""
        return self.confidence_min < 0

    def confidence_weight(self, confidence: float) -> float:
        """The weight of a verdict in the Thompson tallies: on a 0..max scale the confidence's
        place on it (c / 100 on 0-100); on a directional scale how far the slider is towards
        the chosen end (|c| / 100 on -100..100)."""
        return confidence_weight(confidence, (self.confidence_min, self.confidence_max))


def confidence_weight(confidence: float, scale: tuple[float, float]) -> float:
    """A verdict's weight on the scale (lo, hi): (c - lo) / (hi - lo) when lo >= 0; on a
    directional scale (lo < 0 < hi) the distance from 0 towards the end it is on."""
    lo, hi = scale
    if not lo < hi:
        raise ValueError(f"confidence scale must run from low to high, got {lo}..{hi}")
    if not lo <= confidence <= hi:
        span = f"{lo}-{hi}" if lo >= 0 else f"{lo}..{hi}"
        raise ValueError(f"confidence must be within {span}, got {confidence}")
    if lo < 0:
        return confidence / hi if confidence > 0 else confidence / lo
    return (confidence - lo) / (hi - lo)


class Postprocess(_Strict):
    lowercase: bool = False
    # "IN WHAT WAY" -> "In what way"; None = the kind's default (on for ELIZA, whose 1966
    # output is all capitals; Jones & Bergen's ELIZA wrote in sentence case)
    sentence_case: bool | None = None
    strip_markdown: bool = True
    typo_rate: Annotated[float, Field(ge=0, le=1)] = 0.0
    cut_to_limit: bool = True


# the small local model's tuned settings (see `turinglab witness probe`): short answers, a little
# less random than the API default
LOCAL_DEFAULTS: dict[str, Any] = {"max_tokens": 60, "temperature": 0.7, "timeout_s": 30.0, "retries": 1}


class WitnessSpec(_Strict):
    """One AI witness. Human witnesses are participants, not specs."""

    codename: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")]
    kind: str  # a registered witness kind (built-ins eliza, llm, local; `turinglab plugins`)
    options: dict[str, Any] | None = None  # the kind's own settings, checked by its options model
    # llm / local
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: Annotated[float, Field(ge=0, le=2)] = 1.0
    max_tokens: Annotated[int, Field(gt=0)] = 120
    stop: tuple[str, ...] = ()
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    retries: Annotated[int, Field(ge=0)] = 2
    prompt: str | None = None  # name of a shipped prompt template, or a path to a .j2 file
    persona: dict[str, Any] = Field(default_factory=dict)
    # draw the persona's name, city, time zone and languages anew for each game (Jones & Bergen;
    # witnesses/persona_draw.py); None: the study's `persona_draw`. Only LLM and local witnesses.
    persona_draw: bool | None = None
    fallback: str | None = "eliza"  # what answers when the model fails: "eliza" or fixed text
    script: str | None = None  # eliza: path of another script (default: DOCTOR)
    timing: Timing = Timing()
    postprocess: Postprocess = Postprocess()

    @model_validator(mode="before")
    @classmethod
    def _local_defaults(cls, data: Any) -> Any:
        """A `kind: local` witness starts from the tuned settings of the shipped `local` witness
        (short replies, less random, one retry; the young persona in lowercase); fields the
        study file gives win."""
        if not isinstance(data, dict) or data.get("kind") != "local":
            return data
        out = {**LOCAL_DEFAULTS, **data}
        if "postprocess" not in data and data.get("prompt", "young") == "young":
            out["postprocess"] = {"lowercase": True}
        return out

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        from turinglab.plugins.manager import witness_kinds

        kinds = witness_kinds()
        if kind not in kinds:  # the error points at the field: witnesses[0].kind (line N)
            raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(kinds)} "
                             "(plugins add more: `turinglab plugins`)")
        return kind

    @model_validator(mode="after")
    def _kind_fields(self) -> "WitnessSpec":
        from turinglab.plugins.manager import witness_kinds

        model = witness_kinds()[self.kind].options
        if model is not None:
            try:
                model.model_validate(self.options or {})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "options"
                raise ValueError(f"witness {self.codename!r}: options.{where}: {first['msg']}") from None
        elif self.options:
            raise ValueError(f"witness {self.codename!r}: kind {self.kind!r} takes no 'options'; remove them")
        if self.kind == "llm" and not self.model:
            raise ValueError(
                f"witness {self.codename!r}: kind 'llm' needs 'model' (e.g. model: gpt-4o-mini)"
            )
        return self


class Allocation(_Strict):
    """Matchmaking (Jones & Bergen)."""

    human_ratio: Annotated[float, Field(ge=0, le=1)] = 0.5  # share of games with a human witness
    ai_fallback_mean_s: Annotated[float, Field(ge=0)] = 45.0  # 45 + N(mu, sigma) seconds
    ai_fallback_noise_mu: float = 1.0
    ai_fallback_noise_sigma: Annotated[float, Field(ge=0)] = 7.0
    wait_match_window: Annotated[int, Field(gt=0)] = 5  # AI games wait the mean of the last N human waits
    witness_policy: Literal["thompson", "uniform", "groups"] = "thompson"
    # "groups" (Jones & Bergen 2025's pre-registration): the AI witnesses are split into groups; an
    # interrogator meets the groups in turn, in random order (each group once before any twice),
    # and a witness of the group uniformly
    witness_groups: tuple[tuple[str, ...], ...] = ()
    # games per participant (every seat); after them the participant is done (phase `done`, the
    # completion link). None: no limit
    session_rounds: Annotated[int | None, Field(gt=0)] = None
    # three-player: a game needs two people at once. A participant left waiting alone sees how
    # many are here; after lone_wait_s, lone_then "end" ends their part (thanks + the completion
    # link), "wait" keeps them waiting (they may stop at any time)
    lone_wait_s: Annotated[float, Field(gt=0)] = 300.0
    lone_then: Literal["end", "wait"] = "end"
    # share of AI games picked uniformly under Thompson sampling, so that every witness keeps a
    # selection probability of at least thompson_floor / (number of AI witnesses); 0 = pure Thompson
    thompson_floor: Annotated[float, Field(ge=0, le=1)] = 0.2
    # games at once per AI witness (a model answers late past its capacity): a number, "auto"
    # (estimated from timed replies on this machine) or "unlimited"; witnesses not named: "auto"
    # for the embedded local model, "unlimited" for the rest. A due AI game goes to another witness
    # with room (its selection probability among those is recorded), else to `overflow_witness`
    # (one without a limit) if set, else the participant keeps waiting until a game ends.
    capacity: dict[str, Annotated[int, Field(ge=1)] | Literal["auto", "unlimited"]] = {}
    capacity_headroom: Annotated[float, Field(gt=0, le=1)] = 0.7
    overflow_witness: str | None = None


class StopAfter(_Strict):
    """Quotas (issue 27): recruitment stops once the study has this many games (bot games not
    counted) or participants (who played in any seat); games in progress finish, new arrivals
    see a page saying the study is full."""

    games: Annotated[int | None, Field(gt=0)] = None
    participants: Annotated[int | None, Field(gt=0)] = None


class Criteria(_Strict):
    """How the three-player pass criterion reads its confidence set (issue 42). ``closed`` (the
    default, Giunti's): a set that starts exactly at 0.5 passes, whose size is above the nominal
    (3.2 % at n = 50 against 2.5 %; the report prints it); ``closed: false``: the open criterion,
    a set wholly above 0.5, which keeps the nominal size."""

    closed: bool = True


class Counting(_Strict):
    """Which games count (issue 36; turinglab/store/counting.py): for the quotas of `stop_after`
    and the bonus file. An ended game counts when its interrogator sent at least `min_messages`
    messages (never fewer than 1: an instant verdict does not count) and it lasted at least
    `min_seconds`. Bot and demo games and games a researcher ended never count."""

    min_messages: Annotated[int, Field(ge=1)] = 1
    min_seconds: Annotated[float, Field(ge=0)] = 0.0


REDIRECT_AFTER_S = 60  # Withdrawal.redirect_after_s by default


class Withdrawal(_Strict):
    """Participants' withdrawal (issue 38; turinglab/store/withdraw.py). `on_done_page`: the done page
    shows the participant's code and a button that erases their data; `witness_games`: the games in
    which a withdrawn participant was the witness stay in the analyses for the interrogator's verdict
    ("keep") or leave them too ("exclude": flag withdrawn, as the games they judged). `redirect_after_s`:
    a done page that offers withdrawal and sends the participant on (a completion code's redirect or
    `completion_url`) does so after this many seconds, counted down on the page with a button that
    stops it; 0: never by itself (the participant follows the link when ready)."""

    on_done_page: bool = True
    witness_games: Literal["keep", "exclude"] = "keep"
    redirect_after_s: Annotated[int, Field(ge=0, le=3600)] = REDIRECT_AFTER_S


class Retention(_Strict):
    """How long raw data is kept (issue 38; `turinglab db purge`): raw Prolific ids `payment_ids_days`
    after the participant's last game; raw chat `raw_chat_days` after its game ended (then redacted)."""

    payment_ids_days: Annotated[int, Field(ge=0)] | None = None
    raw_chat_days: Annotated[int, Field(ge=0)] | None = None


Outcome = Literal["completed", "no_consent", "screened_out", "timed_out", "returned"]
PROLIFIC_REDIRECT = "https://app.prolific.com/submissions/complete?cc={code}"


class Prolific(_Strict):
    """Running the study on Prolific (issue 27; README "A study on Prolific"). Each outcome's
    completion code is shown on the page that ends the participant's part and the browser goes
    on to `redirect` with the code: `completed` (every round played, or the study's end),
    `no_consent` ("I do not agree"), `screened_out` (a repeat participant when `block_repeat`),
    `timed_out` (three-player: waited alone until `allocation.lone_wait_s` ended the wait),
    `returned` (arrived while recruitment is paused or the study is full: asked to return it).
    An outcome without a code shows a plain thank-you. Bonuses (`turinglab admin bonus`):
    `bonus_per_game` for each game played in any seat plus `bonus_per_correct` for each verdict
    that was right, in the study's currency (Prolific: GBP or USD)."""

    completion_codes: dict[Outcome, Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")]] = {}
    redirect: Annotated[str, Field(pattern=r"^https://[^\s]*\{code\}[^\s]*$")] = PROLIFIC_REDIRECT
    block_repeat: bool = False  # a Prolific id already seen (another browser, or a new link) is screened out
    bonus_per_game: Annotated[float, Field(ge=0)] = 0.0
    bonus_per_correct: Annotated[float, Field(ge=0)] = 0.0
    pay_blocked: bool = False  # the bonus file pays blocked participants too (default: left out)
    pay_not_counting: bool = False  # the bonus file pays games that do not count too (see `counting`)


class Study(_Strict):
    name: Annotated[str, Field(min_length=1)]
    version: Annotated[int, Field(ge=1)] = 1
    format: Format = "two-player"
    preset: str | None = None
    rules: Rules = Rules()
    witnesses: tuple[WitnessSpec, ...] = ()
    allocation: Allocation = Allocation()
    # when the demographic (exit) survey is offered: after the participant's first game, or after
    # the last round of a session (`allocation.session_rounds`)
    survey_after: Literal["first", "last"] = "first"
    exclusions: tuple[str, ...] = ("three_previous_ai", "knows_witness")
    # per-game persona draws for every LLM/local witness that does not set its own `persona_draw`
    persona_draw: bool = False
    content_filter: tuple[str, ...] = ()  # extra blocked words beyond the shipped list
    consent_text: str | None = None
    completion_url: str | None = None  # e.g. a Prolific completion redirect
    # what participants see in the page header and tab title (None: a neutral title, never `name`)
    display_name: Annotated[str | None, Field(min_length=1, max_length=80)] = None
    no_consent_url: str | None = None  # where "I do not agree" leads, e.g. Prolific's no-consent code link
    # the pass decisions of several AI witnesses: one family adjusted by Holm ("holm", the default when
    # unset) or each a per-witness confirmatory test ("per-witness"); the report says which
    pass_decisions: Literal["holm", "per-witness"] | None = None
    stop_after: StopAfter | None = None  # quotas (issue 27)
    prolific: Prolific | None = None  # completion codes per outcome, repeat participants, bonuses (issue 27)
    counting: Counting | None = None  # which games count for quotas and bonuses (None: the defaults)
    criteria: Criteria | None = None  # the three-player pass criterion, closed or open (None: closed)
    # studies whose participants (by Prolific id) are screened out here, as Prolific's own screeners do
    exclude_participants_of: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    # the participant pages' language, a BCP 47 tag with a message catalogue (issue 39): pages, dates,
    # numbers, the LLM witnesses' chat language and the content filter's word lists; ELIZA stays English
    language: str = "en"

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str) -> str:
        from turinglab.i18n import check_language

        return check_language(v)
    withdrawal: Withdrawal | None = None  # None: the defaults of Withdrawal
    retention: Retention | None = None  # None: nothing expires

    def completion_link(self, outcome: str) -> str | None:
        """Where a participant goes when their part ends with `outcome` (None: nowhere, a thank-you):
        the Prolific code's redirect, else `completion_url` (completed) / `no_consent_url` (no_consent)."""
        code = self.completion_code(outcome)
        if code is not None:
            return self.prolific.redirect.replace("{code}", code)  # type: ignore[union-attr]
        return {"completed": self.completion_url, "no_consent": self.no_consent_url}.get(outcome)

    def completion_code(self, outcome: str) -> str | None:
        return None if self.prolific is None else self.prolific.completion_codes.get(outcome)  # type: ignore[call-overload]

    @model_validator(mode="after")
    def _unique_codenames(self) -> "Study":
        names = [w.codename for w in self.witnesses]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"witness codenames must be unique; repeated: {', '.join(dupes)}")
        a = self.allocation
        if self.survey_after == "last" and a.session_rounds is None:
            raise ValueError("survey_after: last needs allocation.session_rounds (the last round); "
                             "set the rounds or use survey_after: first")
        unknown = sorted(set(a.capacity) - set(names))
        if unknown:
            raise ValueError(f"allocation.capacity names no witness {', '.join(map(repr, unknown))}; "
                             f"use the codenames of this study's witnesses ({', '.join(names) or 'none'})")
        grouped = [c for g in a.witness_groups for c in g]
        if a.witness_policy == "groups" and not a.witness_groups:
            raise ValueError("allocation.witness_policy 'groups' needs allocation.witness_groups, e.g. "
                             "[[ELIZA], [Local-NO-PERSONA], [Local-PERSONA]]")
        bad = sorted({c for c in grouped if c not in names} | {c for c in grouped if grouped.count(c) > 1})
        if bad or any(not g for g in a.witness_groups):
            raise ValueError(f"allocation.witness_groups: every group needs witnesses of this study, each in one "
                             f"group only; check {', '.join(map(repr, bad)) or 'the empty group'} "
                             f"(witnesses: {', '.join(names) or 'none'})")
        if a.witness_policy == "groups" and set(grouped) != set(names):
            raise ValueError(f"allocation.witness_groups leaves out {', '.join(sorted(set(names) - set(grouped)))}; "
                             "put every witness of the study in a group")
        if a.overflow_witness is not None:
            if a.overflow_witness not in names:
                raise ValueError(f"allocation.overflow_witness {a.overflow_witness!r} is not one of this study's "
                                 f"witnesses ({', '.join(names) or 'none'})")
            if self.capacity_of(a.overflow_witness) != "unlimited":
                raise ValueError(f"allocation.overflow_witness {a.overflow_witness!r} has a capacity limit; "
                                 "choose a witness without one (e.g. ELIZA or an API model) or set its capacity: unlimited")
        return self

    def draws_persona(self, spec: WitnessSpec) -> bool:
        """Does this witness get a persona drawn for each game?"""
        on = self.persona_draw if spec.persona_draw is None else spec.persona_draw
        return on and spec.kind in ("llm", "local")

    def capacity_of(self, codename: str) -> int | str:
        """The capacity rule of one witness: a number, "auto" or "unlimited" (see Allocation)."""
        rule = self.allocation.capacity.get(codename)
        if rule is not None:
            return rule
        kind = next((w.kind for w in self.witnesses if w.codename == codename), None)
        return "auto" if kind == "local" else "unlimited"


def consent_version(text: str) -> str:
    """The version of a consent text: its SHA-256 (stored with each participant who agreed to it)."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(study: BaseModel) -> str:
    """The study (live or static) as canonical JSON: sorted keys, defaults filled in, no whitespace."""
    data = study.model_dump(mode="json")
    for key in ("pass_decisions", "stop_after", "prolific", "counting", "withdrawal", "retention", "criteria"):  # unset: the hash of studies written before the key
        if key in data and data[key] is None:
            data.pop(key)
    for w in data.get("witnesses") or ():  # no options: the hash of witnesses written before them
        if isinstance(w, dict) and w.get("options") is None:
            w.pop("options", None)
    if data.get("exclude_participants_of") == []:  # unset: the hash of studies written before it
        data.pop("exclude_participants_of")
    pro = data.get("prolific")
    for key in ("pay_blocked", "pay_not_counting"):  # off: the hash of studies written before them
        if isinstance(pro, dict) and pro.get(key) is False:
            pro.pop(key)
    wd = data.get("withdrawal")
    if isinstance(wd, dict) and wd.get("redirect_after_s") == REDIRECT_AFTER_S:  # the hash of studies before it
        wd.pop("redirect_after_s")
    if data.get("language") == "en":  # English, the default: the hash of studies written before languages
        data.pop("language")
    rules = data.get("rules")
    if isinstance(rules, dict) and rules.get("belief_tracking") is False:  # off: the hash of studies written before it
        rules.pop("belief_tracking")
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def config_hash(study: BaseModel) -> str:
    """sha256 of the canonical JSON; stored with every game (and, of a static study, every trial)."""
    return hashlib.sha256(canonical_json(study).encode()).hexdigest()
