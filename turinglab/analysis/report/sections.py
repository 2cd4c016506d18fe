"""The built-in report sections, registered through the plugin hook: who wrote the AI witnesses'
replies (when the data records it) and the blinding audit (when the report was asked for it,
`turinglab report --audit`)."""

from __future__ import annotations

from turinglab.analysis.audit.audit_text import html_context, markdown
from markupsafe import escape

from turinglab.analysis.live.schema import AI_SOURCES
from turinglab.analysis.report.report import _env, _md_table, f, md_escape
from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import ReportSection


def _audit(a, fmt: str) -> str:
    if getattr(a, "audit", None) is None:
        return ""
    if fmt == "md":
        return markdown(a.audit, md_escape)
    return _env().get_template("audit_section.html.j2").render(audit=html_context(a.audit))


SOURCES_TEXT = ("Who wrote each AI witness's replies (the source recorded with every shown reply): its model "
                "at the first try, after the content filter or persona guard refused earlier tries (regenerated), "
                "the persona's brush-off of a machine task, the fallback (ELIZA or the configured one) or the last "
                "resort line; unknown for replies stored before sources were recorded. The pass rate (judged human) "
                "is given in all analysed games and without the games in which the fallback wrote any reply "
                "(flag fallback_wrote_reply; a study excludes them by listing the flag in its exclusions).")


def _rate(r: dict, which: str) -> str:
    if not r[f"{which}_n"]:
        return "no games"
    return f"{r[f'{which}_k']}/{r[f'{which}_n']} = {f(r[f'{which}_rate'], 2)} [{f(r[f'{which}_low'], 2)}, {f(r[f'{which}_high'], 2)}]"


def _source_rows(a) -> list[list[str]]:
    t = getattr(a, "sources", None)
    if t is None or t.empty:
        return []
    return [[str(r["witness"]), str(r["replies"]), *[f(r[f"share_{s}"], 2) for s in AI_SOURCES],
             _rate(r, "all"), _rate(r, "without")] for r in t.to_dict("records")]


def _sources(a, fmt: str) -> str:
    rows = _source_rows(a)
    if not rows:
        return ""
    header = ["witness", "replies", *AI_SOURCES, "pass rate, all games", "without fallback games"]
    if fmt == "md":
        return "\n\n".join(["## Replies by source", md_escape(SOURCES_TEXT),
                             _md_table(header, [[md_escape(c) for c in r] for r in rows])])
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (f'<h2 id="reply-sources">Replies by source</h2>\n<p>{escape(SOURCES_TEXT)}</p>\n'
            f"<table><tr>{head}</tr>\n{body}</table>")


@hookimpl
def turinglab_report_sections() -> list[ReportSection]:
    return [ReportSection("reply-sources", "Replies by source", _sources),
            ReportSection("blinding-audit", "Blinding audit", _audit)]
