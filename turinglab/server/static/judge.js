// turinglab judge pages (static Turing tests): reaction time, the minimum viewing time, the
// drawings over the picture (boxes, the replayable scanpath) and the survey.
// Everything shown comes from the server-rendered page; text is set with textContent only.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const t = window.turinglabT;  // the study's language (i18n.js)
  // reduced motion: the scanpath is drawn whole at once instead of one fixation at a time
  const still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const t0 = performance.now();

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  // ---- the item page ----
  const judge = document.getElementById("judge");
  if (judge) {
    const item = JSON.parse(document.getElementById("item-data").textContent);
    const form = document.getElementById("answer-form");
    const submit = document.getElementById("btn-submit");
    const note = document.getElementById("wait-note");
    const minRt = Number(judge.dataset.minRt || 0);
    let played = item.task !== "fv" || !item.image; // the scanpath must have played once
    let sent = false;

    function ready() { return performance.now() - t0 >= minRt && played; }
    function refresh() {
      const wait = Math.ceil((minRt - (performance.now() - t0)) / 1000);
      submit.disabled = !ready();
      if (ready()) { note.hidden = true; return; }
      note.hidden = false;
      note.textContent = !played ? t("You can answer once the eye movements have played through.")
        : t("Please look at the item a little longer ({seconds} s) before answering.", { seconds: wait });
    }
    refresh();
    const tick = setInterval(() => { refresh(); if (ready()) clearInterval(tick); }, 200);

    form.addEventListener("submit", (ev) => {
      if (sent || !ready()) { ev.preventDefault(); return; }
      form.elements.rt_ms.value = String(Math.round(performance.now() - t0));
      sent = true;
      setTimeout(() => { submit.disabled = true; }, 0); // after the browser has taken the form
    });
    window.addEventListener("pageshow", (e) => { if (e.persisted) { sent = false; refresh(); } });

    const img = document.getElementById("picture");
    const svg = document.getElementById("overlay");
    if (img && svg) {
      const draw = () => {
        const w = img.naturalWidth || 1, h = img.naturalHeight || 1;
        if (item.task === "object") drawBoxes(svg, item.boxes || [], w, h);
        else if (item.task === "fv") scanpath(svg, item, () => { played = true; refresh(); });
      };
      if (img.complete && img.naturalWidth) draw(); else img.addEventListener("load", draw);
      img.addEventListener("error", () => { played = true; refresh(); });
    }
  }

  // pixels of the picture, or fractions of it when every value is at most 1
  function scaleTo(vals, w, h) {
    const frac = vals.every((v) => Math.abs(v) <= 1);
    return frac ? vals.map((v, i) => v * (i % 2 ? h : w)) : vals;
  }

  function drawBoxes(svg, boxes, w, h) {
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    const sw = Math.max(2, w / 200);
    boxes.forEach((b) => {
      const [x, y, bw, bh] = scaleTo(b.xywh, w, h);
      el("rect", { x, y, width: bw, height: bh, class: "box", "stroke-width": sw }, svg);
      if (b.label) {
        const label = el("text", { x: x + sw, y: y + 6 * sw, class: "box-label", "font-size": 6 * sw }, svg);
        label.textContent = b.label;
      }
    });
  }

  // Zhang's scanpaths over a 1280 x 1024 frame (y down), one fixation at a time: pixels (fv.json),
  // or [-1, 1] fractions when every value is within 1. A fixation outside the frame is drawn at its
  // edge (clipped), dashed, so the judge sees every fixation inside the picture.
  function scanpath(svg, item, onceDone) {
    const [fw, fh] = item.frame || [1280, 1024];
    svg.setAttribute("viewBox", `0 0 ${fw} ${fh}`);
    svg.setAttribute("preserveAspectRatio", "none");
    // circles at least ~11 px on screen, whatever the picture's drawn size (phones included)
    const scale = fw / (svg.getBoundingClientRect().width || fw);
    const r = Math.max(28, 11 * scale), font = Math.max(30, 12 * scale);
    const raw = item.scanpath || [];
    const unit = raw.every(([x, y]) => Math.abs(x) <= 1 && Math.abs(y) <= 1);
    const clip = (v, hi) => Math.min(Math.max(v, 0), hi);
    const pts = raw.map(([x, y]) => {
      const px = unit ? (x + 1) / 2 * fw : x, py = unit ? (y + 1) / 2 * fh : y;
      return [clip(px, fw), clip(py, fh), px < 0 || px > fw || py < 0 || py > fh];
    });
    let timer = null;
    function play() {
      clearTimeout(timer);
      svg.replaceChildren();
      let i = 0;
      const step = () => {
        if (i >= pts.length) { onceDone(); return; }
        const [x, y, outside] = pts[i];
        if (i > 0) el("line", { x1: pts[i - 1][0], y1: pts[i - 1][1], x2: x, y2: y, class: "saccade" }, svg);
        el("circle", { cx: x, cy: y, r, class: outside ? "fixation outside" : "fixation" }, svg);
        const num = el("text", { x, y: y + font * 0.37, class: "fix-num", style: `font-size: ${font}px` }, svg);
        num.textContent = String(i + 1);
        i += 1;
        if (still) step(); else timer = setTimeout(step, 400);
      };
      step();
    }
    const again = document.getElementById("btn-replay");
    if (again) again.addEventListener("click", play);
    play();
  }

  // ---- the survey page ----
  const sform = document.getElementById("survey-form");
  if (sform) {
    const app = document.getElementById("app");
    const toast = document.getElementById("toast");
    async function send(body) {
      const r = await fetch(`${app.dataset.root || ""}/p/${app.dataset.token}/survey`, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": app.dataset.csrf },
        body: JSON.stringify(body),
      });
      if (r.ok) { location.href = `${app.dataset.root || ""}/p/${app.dataset.token}/done`; return; }
      let msg = t("Not saved; please try again.");
      try { msg = (await r.json()).detail || msg; } catch (e) { /* not JSON */ }
      toast.textContent = msg;
      toast.hidden = false;
    }
    sform.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const body = {};
      for (const [k, v] of new FormData(sform).entries()) if (v !== "") body[k] = k === "age" ? Number(v) : v;
      send(body);
    });
    document.getElementById("btn-skip").addEventListener("click", () => send({ skipped: true }));
  }
})();
