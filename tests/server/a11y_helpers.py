"""What the accessibility and language browser tests share (issue 39): axe-core runs, keyboard-only
moves, and the record of what the page's live regions announced."""

from __future__ import annotations

from axe_playwright_python.async_playwright import Axe

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WIDTHS = (PHONE, DESKTOP)
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]  # axe-core's rules for WCAG 2.2 level A and AA
AXE = Axe()

# every addition to a live region (aria-live, role=log/alert/status), as a screen reader would get it
RECORD_ANNOUNCEMENTS = """
window.__said = [];
document.addEventListener('DOMContentLoaded', () => {
  const live = (n) => n && n.closest && n.closest('[aria-live], [role=log], [role=alert], [role=status]');
  new MutationObserver((muts) => {
    for (const m of muts) {
      const region = live(m.target.nodeType === 1 ? m.target : m.target.parentElement);
      if (!region || region.hidden) continue;
      const text = (m.type === 'childList' ? [...m.addedNodes].map((n) => n.textContent).join(' ') : region.textContent).trim();
      if (text) window.__said.push({ region: region.id || region.getAttribute('role'), text: text });
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['hidden'] });
});
"""


async def axe_violations(page) -> list[str]:
    """axe-core's WCAG 2.2 A/AA violations of the page as it is now: one line each (rule, nodes)."""
    r = await AXE.run(page, options={"runOnly": {"type": "tag", "values": WCAG_AA}, "resultTypes": ["violations"]})
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:5]} {v['nodes'][0]['failureSummary'][:300]}"
            for v in r.response["violations"]]


async def tab_to(page, selector: str, limit: int = 60, back: bool = False) -> None:
    """Press Tab (Shift+Tab when `back`) until the focused element matches `selector`; fails when
    the element is not reachable by keyboard within `limit` presses."""
    for _ in range(limit):
        if await page.evaluate("(s) => !!document.activeElement && document.activeElement.matches(s)", selector):
            return
        await page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"{selector} not reached with the keyboard in {limit} presses "
                         f"(focus on {await page.evaluate('document.activeElement.outerHTML.slice(0, 120)')})")


async def said(page) -> list[dict]:
    return await page.evaluate("window.__said || []")
