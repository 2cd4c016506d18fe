"""The built-in report sections, registered through the plugin hook: the blinding audit (when the
report was asked for it, `turinglab report --audit`)."""

from __future__ import annotations

from turinglab.analysis.audit.audit_text import html_context, markdown
from turinglab.analysis.report.report import _env, md_escape
from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import ReportSection


def _audit(a, fmt: str) -> str:
    if getattr(a, "audit", None) is None:
        return ""
    if fmt == "md":
        return markdown(a.audit, md_escape)
    return _env().get_template("audit_section.html.j2").render(audit=html_context(a.audit))


@hookimpl
def turinglab_report_sections() -> list[ReportSection]:
    return [ReportSection("blinding-audit", "Blinding audit", _audit)]
