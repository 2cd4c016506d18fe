"""The message catalogues (issue 39): in step with the code, complete in German and Spanish,
loaded from the .po alone (a fresh install has no .mo), and the study's language where it acts."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timezone

import pytest
from typer.testing import CliRunner

from turinglab import i18n
from turinglab.cli import app
from turinglab.game.config import Study, WitnessSpec, config_hash
from turinglab.i18n import tools
from turinglab.game.static_config import StaticStudy, static_hash


def ids(cat) -> set:
    return {(m.context, m.id) for m in cat if m.id}


def test_the_template_is_in_step_with_the_code():
    """A participant string added to a template, a script or the server without re-extracting fails here."""
    fresh = tools.extract()
    assert ids(fresh) == ids(tools.read(tools.POT)), "run `turinglab i18n extract` then `turinglab i18n update`"
    where = {loc for m in fresh for loc, _ in m.locations}
    for f in ("play.html", "judge.html", "consent.html", "game.js", "judge.js", "app.py", "pages.py", "protocol.py"):
        assert any(w.endswith(f) for w in where), f


@pytest.mark.parametrize("lang", ["de", "es"])
def test_german_and_spanish_are_complete(lang):
    po = tools.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po"
    s = tools.check(po)
    assert s.total == len(ids(tools.read(tools.POT)))
    assert (s.missing, s.fuzzy, s.bad_placeholders) == ([], [], [])
    # no translation is the English left as it was, but for names, numbers and placeholders alone
    same = [m.id for m in tools.read(po) if m.id and m.string == m.id and re.search(r"[a-z]{4}", re.sub(r"%\(\w+\)s|\{\w+\}", "", m.id))]
    assert same == [], same


def test_compile_check_and_extract_check_pass_from_the_command_line(tmp_path, monkeypatch):
    r = CliRunner().invoke(app, ["i18n", "extract", "--check"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["i18n", "compile", "--check"])
    assert r.exit_code == 0 and "de: 3" in r.output and "es: 3" in r.output, r.output
    for mo in tools.LOCALE_DIR.glob("*/LC_MESSAGES/*.mo"):  # compile wrote them; the loader needs none
        mo.unlink()


def test_a_po_file_alone_serves_its_language(tmp_path, monkeypatch):
    """A fresh `pip install -e .` has the .po files only: they are compiled in memory on first use."""
    import shutil

    for lang in ("de", "es"):  # a copy without any .mo beside it, searched first
        (tmp_path / lang / "LC_MESSAGES").mkdir(parents=True)
        shutil.copy(tools.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po", tmp_path / lang / "LC_MESSAGES")
    monkeypatch.setenv("TURINGLAB_LOCALE_DIR", str(tmp_path))
    assert i18n.po_path("de") == tmp_path / "de" / "LC_MESSAGES" / "messages.po"
    de = i18n.gettext_for("de")
    assert de("Send") == "Senden"
    assert de("You have answered all %(n)s items. Your answers are saved.", n=12).startswith("Sie haben alle 12 ")
    assert i18n.translations("es").pgettext("prior_visits", "none") == "nunca"
    assert i18n.translations("de").pgettext("education", "none") != i18n.translations("de").pgettext("prior_visits", "none")
    js = i18n.js_catalogue("de")
    assert js["Type a message"] == "Nachricht eingeben"
    assert js["Wait for the reply before sending another message."].startswith("Warten Sie")  # protocol.py's texts
    assert "Consent" not in js  # template messages stay out of the scripts' catalogue
    assert i18n.js_catalogue("en") == {} and i18n.gettext_for("en")("Send") == "Send"
    assert i18n.gettext_for("de-AT")("Send") == "Senden"  # a region falls back to its language


def test_a_study_language_is_checked_once_and_english_keeps_old_hashes():
    assert Study(name="x", language="de-at").language == "de-AT"
    with pytest.raises(ValueError, match="no message catalogue; available: de, en, es"):
        Study(name="x", language="fr")
    with pytest.raises(ValueError, match="not a BCP 47 tag"):
        Study(name="x", language="german")
    old = Study(name="x")
    assert "language" not in old.model_dump_json() or config_hash(old) == config_hash(Study(name="x", language="en"))
    assert config_hash(Study(name="x", language="de")) != config_hash(old)
    assert static_hash(StaticStudy(name="s", language="es")) != static_hash(StaticStudy(name="s"))


def test_a_lab_adds_a_language_in_its_own_folder(tmp_path, monkeypatch):
    """$TURINGLAB_LOCALE_DIR: a catalogue outside the package, e.g. French, found by the study file's check."""
    from babel.messages.catalog import Catalog

    cat = Catalog(locale="fr")
    cat.add("Send", "Envoyer")
    tools.write(cat, tmp_path / "fr" / "LC_MESSAGES" / "messages.po")
    monkeypatch.setenv("TURINGLAB_LOCALE_DIR", str(tmp_path))
    assert Study(name="x", language="fr").language == "fr"
    assert i18n.gettext_for("fr")("Send") == "Envoyer" and i18n.gettext_for("fr")("Skip") == "Skip"


def test_durations_and_numbers_follow_the_language():
    assert i18n.duration(300, "de") == "5 Minuten" and i18n.duration(300, "en") == "5 minutes"
    assert i18n.duration(1.5, "de") == "1,5 Sekunden" and i18n.duration(90, "es") == "90 segundos"
    assert i18n.number(1.5, "de") == "1,5" and i18n.language_name("es-MX") == "Spanish (Mexico)"


def test_the_llm_witness_is_told_the_language_and_eliza_is_not():
    from turinglab.witnesses import persona
    from turinglab.witnesses.base import GameContext

    now = datetime.now(timezone.utc)
    de = persona.render("young", {}, GameContext("g", now, now, 300, 300, language="de"))
    en = persona.render("young", {}, GameContext("g", now, now, 300, 300))
    assert "Write every message in German" in de and "German" not in en
    notes = i18n.admin_notes("de", (WitnessSpec(codename="Eliza", kind="eliza", fallback=None),
                                    WitnessSpec(codename="Loc", kind="local", prompt="young")), "word lists: English and de")
    text = " ".join(notes)
    assert "Participant pages: German (de)." in text and "ELIZA (Eliza) answers in English" in text
    assert "LLM witnesses (Loc) are told to chat in German" in text
    assert not any("ELIZA" in n for n in i18n.admin_notes("en", (WitnessSpec(codename="E", kind="eliza", fallback=None),)))


def test_the_content_filter_uses_the_languages_lists_and_says_which():
    from turinglab.witnesses.content_filter import ContentFilter

    de, es, fr = ContentFilter(language="de"), ContentFilter(language="es"), ContentFilter(language="fr")
    assert de.lists == "word lists: English and de" and es.lists == "word lists: English and es"
    assert "English only" in fr.lists and "'fr'" in fr.lists
    check = lambda f, t: asyncio.run(f.check(t))  # noqa: E731
    assert check(de, "du A r s c h l o c h") and check(de, "fuck") and not check(de, "das Gespräch war kurz")
    assert check(es, "eres un CABRÓN") and not check(es, "mi computadora") and not check(ContentFilter(), "cabrón")


def test_persona_draws_come_from_the_languages_country():
    from turinglab.witnesses import persona_draw as d

    de = [d.draw(s, **d.files_for("de")) for s in range(200)]
    assert {p["country"] for p in de} == {"Germany"} and {p["timezone"] for p in de} == {"Europe/Berlin"}
    assert {p["name"] for p in de} <= set(d.names(d.files_for("de")["names_path"])) and len({p["city"] for p in de}) > 5
    assert "Berlin, Berlin" in {p["city"] for p in de} and all(p["languages"] == ["German"] for p in de)
    es = [d.draw(s, **d.files_for("es-MX")) for s in range(200)]  # a region without its own files: the language's
    assert {p["country"] for p in es} == {"Spain"} and "Atlantic/Canary" in {p["timezone"] for p in es}
    assert [d.draw(s, **d.files_for("en")) for s in range(20)] == [d.draw(s) for s in range(20)]  # English as before
    assert d.files_for("fr")["country"] == "the US"
