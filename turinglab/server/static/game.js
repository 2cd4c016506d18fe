// turinglab game page: shows what the server sends; the server decides everything.
// All user text is inserted with textContent, never innerHTML.
"use strict";
(function () {
  const app = document.getElementById("app");
  const token = app.dataset.token;
  const $ = (id) => document.getElementById(id);
  const t = window.turinglabT;  // the study's language (i18n.js)
  let ws = null, offset = 0, retry = 0, st = null, surveyPending = false;
  let heard = Date.now();  // when a frame last came in
  // what was sent but not yet acknowledged, and drafts, survive a reload (sessionStorage)
  const store = window.sessionStorage;
  const OUT = "tl-outbox-" + token;
  let outbox = JSON.parse(store.getItem(OUT) || "[]");
  function saveOutbox() { store.setItem(OUT, JSON.stringify(outbox)); }
  function draftKey(g, c) { return "tl-draft-" + token + "-" + g.game_id + "-" + c; }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function now() { return Date.now() + offset; }
  function send(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }
  function toast(text) {
    const box = $("toast");
    box.textContent = text; box.hidden = false;
    clearTimeout(toast.h); toast.h = setTimeout(() => { box.hidden = true; }, 6000);
  }
  // what a screen reader says (the polite live region): only what the page shows anyway
  function say(text) {
    const r = $("sr-live");
    r.append(el("p", "", text));  // an addition to a polite log: read once, in order
    while (r.childElementCount > 6) r.firstElementChild.remove();
  }
  function show(id) {
    const was = document.querySelector(".screen:not([hidden])");
    for (const s of document.querySelectorAll(".screen")) s.hidden = s.id !== id;
    // a new screen: keyboard focus goes to its heading, so the next Tab is inside it
    const h = was && was.id !== id ? document.querySelector("#" + id + " h1, #" + id + " h2") : null;
    if (h && id !== "s-game") { h.tabIndex = -1; h.focus({ preventScroll: true }); }
    if (was && was.id !== id && id === "s-game") {  // into the chat: the message box of the open conversation
      const box = document.querySelector(".conv.active textarea") || document.querySelector(".conv textarea");
      if (box) box.focus({ preventScroll: true });
    }
    document.body.classList.toggle("in-chat", id === "s-game");  // the chat fills the screen
    fit();
    if (id !== "s-game" && $("report-dialog").open) $("report-dialog").close();
    if (id === "s-verdict" || id === "s-game") window.scrollTo(0, 0);
  }
  // the chat's height: 100dvh in CSS; a browser without dvh gets the window's inner height
  const dvh = !!(window.CSS && CSS.supports && CSS.supports("height", "100dvh"));
  function fit() {
    const b = document.body;
    b.style.height = !dvh && b.classList.contains("in-chat") ? window.innerHeight + "px" : "";
  }
  window.addEventListener("resize", fit);
  // a message's time on this browser's clock (times on the wire are the server's)
  const lang = document.documentElement.lang || undefined;
  function clock(ms) { return new Date(ms - offset).toLocaleTimeString(lang, { hour: "numeric", minute: "2-digit" }); }
  function rid() { return Math.random().toString(36).slice(2) + Date.now().toString(36); }

  // ---- connection ---------------------------------------------------------------
  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(proto + "://" + location.host + (app.dataset.root || "") + "/ws/" + encodeURIComponent(token));
    ws.onopen = () => { retry = 0; heard = Date.now(); $("conn").hidden = true; };
    ws.onmessage = (ev) => { heard = Date.now(); handle(JSON.parse(ev.data)); };
    ws.onclose = (ev) => {
      $("conn").hidden = false;
      // 4404: the link is not valid; 4008: this page was opened in too many tabs and this one is the
      // oldest. Reconnecting would not help (and tabs would keep closing each other).
      if (ev.code === 4404 || ev.code === 4008) {
        $("conn").textContent = ev.code === 4404 ? t("This personal link is not valid.") :
          t("This study is open in other tabs: this one was disconnected. Use the newest tab, or reload this one.");
        return;
      }
      setTimeout(connect, Math.min(5000, 300 * 2 ** retry++));
    };
  }
  // every ping is answered (pong): nothing for 50 s means the connection died without closing (a host
  // or its network gone behind a proxy keeps the proxy's side open): drop it and connect again
  setInterval(() => {
    if (ws && ws.readyState === 1 && Date.now() - heard > 50000) {
      const dead = ws;
      dead.onclose = null; dead.onmessage = null; dead.close();
      $("conn").hidden = false; connect();
      return;
    }
    send({ type: "ping" });
  }, 20000);

  // a game that starts while this tab is in the background: say so in the tab title (and, if
  // the participant asked for it, with a short sound) until they look at the tab again
  const baseTitle = document.title;
  let soundOn = store.getItem("tl-sound") === "1";
  $("sound").checked = soundOn;
  $("sound").onchange = () => { soundOn = $("sound").checked; store.setItem("tl-sound", soundOn ? "1" : "0"); if (soundOn) beep(0.01); };
  function beep(vol) {
    try {
      const ctx = beep.ctx || (beep.ctx = new (window.AudioContext || window.webkitAudioContext)());
      const o = ctx.createOscillator(), g = ctx.createGain();
      o.frequency.value = 880; g.gain.value = vol === undefined ? 0.15 : vol;
      o.connect(g); g.connect(ctx.destination); o.start(); o.stop(ctx.currentTime + 0.25);
    } catch (e) { /* no audio: the title still says it */ }
  }
  function gameStarted() {
    if (!document.hidden) return;
    document.title = "● " + t("Your game has started!") + " · " + baseTitle;
    if (soundOn) beep();
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) document.title = baseTitle; });

  function handle(f) {
    if (f.type === "state") {
      offset = f.server_now_ms - Date.now();
      if (f.phase === "game" && (!st || st.phase === "waiting")) gameStarted();
      st = f;
      // forget unacknowledged messages of another game; resend the rest (the server ignores repeats)
      outbox = outbox.filter((m) => f.game && f.phase === "game" && m.game_id === f.game.game_id); saveOutbox();
      render();
      for (const m of outbox) send({ type: "message", conv: m.conv, text: m.text, client_id: m.client_id });
    } else if (f.type === "message") {
      if (!st || !st.game) return;
      if (st.game.messages.some((m) => m.id === f.id)) return;
      st.game.messages.push(f);
      st.game.typing = st.game.typing.filter((c) => c !== f.conv);
      if (f.from !== "you") st.game.your_turn[f.conv] = true;
      addMessage(f); setTyping(f.conv, false); updateCompose(f.conv);
      if (f.from !== "you") {  // read out as shown: a conversation behind a tab (phone) only says it has news
        const pane = document.querySelector('.conv[data-conv="' + f.conv + '"]'), who = convTitle(st.game, f.conv);
        say(pane && pane.checkVisibility() ? t("{who}: {text}", { who: who, text: f.text }) : t("New message from {who}", { who: who }));
      }
      if (f.from !== "you" && f.conv !== activeConv) markUnread(f.conv, 1);
      if (f.from !== "you") updateBelief(true);
    } else if (f.type === "ack") {
      const i = outbox.findIndex((m) => m.client_id === f.client_id);
      if (i < 0) return;
      const m = outbox.splice(i, 1)[0]; saveOutbox();
      // `masked`: personal data (an email, a number, an address, a handle) was hidden before it was sent
      const msg = { id: f.id, conv: m.conv, from: "you", text: f.masked || m.text, t_ms: f.t_ms };
      const known = st && st.game && st.game.messages.some((x) => x.id === f.id);
      if (st && st.game && !known) st.game.messages.push(msg);
      const b = document.querySelector('[data-cid="' + m.client_id + '"]');
      if (b && known) b.remove();  // already shown from the snapshot
      else if (b) { b.removeAttribute("data-cid"); if (f.masked) b.textContent = f.masked; stamp(b, msg); }
      if (f.masked) toast("Personal details (an email, phone number, address or username) were hidden from your message.");
      if (st && st.game) { st.game.your_turn[m.conv] = false; updateCompose(m.conv); }
    } else if (f.type === "typing") {
      if (st && st.game && !st.game.typing.includes(f.conv)) st.game.typing.push(f.conv);
      setTyping(f.conv, true);
      if (st && st.game) say(t("{who} is typing…", { who: convTitle(st.game, f.conv) }));
    } else if (f.type === "error") {
      if (f.client_id) {
        const i = outbox.findIndex((m) => m.client_id === f.client_id);
        if (i >= 0) {
          const m = outbox.splice(i, 1)[0]; saveOutbox();
          const b = document.querySelector('[data-cid="' + m.client_id + '"]');
          if (b) b.remove();
          const box = document.querySelector('.conv[data-conv="' + m.conv + '"] textarea');
          if (box && !box.value) { box.value = m.text; box.dispatchEvent(new Event("input")); }
        }
      }
      toast(errorText(f));
    }
  }
  // an error in the study's language: the server's own texts are in the catalogue; an engine
  // refusal (English detail) is said by its code
  const ERRORS = {
    not_your_turn: t("Wait for the reply before sending another message."),
    too_long: t("This message is too long: shorten it and send it again."),
    too_many_messages: t("You cannot send more messages in this conversation."),
    game_over: t("The game has ended."),
    blocked: t("This message was blocked by the content filter and was not sent. Please rephrase."),
    rate_limited: t("Too many messages at once: wait a moment, then try again."),
    server_error: t("The server could not process that; please try again."),
  };
  function errorText(f) {
    const lookup = t, own = lookup(f.message || "");
    if (own !== (f.message || "") || !lang || lang.split("-")[0] === "en") return own || t("That did not work; please try again.");
    return ERRORS[f.code] || t("That did not work; please try again.");
  }

  // ---- rendering ----------------------------------------------------------------
  function render() {
    const g = st.game;
    $("timer").hidden = !(g && st.phase === "game");
    $("played").textContent = st.participant.games_played ? t("Games played: {n}", { n: st.participant.games_played }) : "";
    if (st.phase === "idle") show("s-idle");
    else if (st.phase === "waiting") { showLone(); show("s-waiting"); }
    else if (st.phase === "alone") show("s-alone");
    else if (st.phase === "done") show("s-done");
    else if (st.phase === "paused" || st.phase === "full" || st.phase === "blocked") show("s-" + st.phase);
    else if (st.phase === "game") { buildGame(g); show("s-game"); }
    else if (st.phase === "verdict") {
      buildGame(g);
      if (g.role === "interrogator") openVerdict(true); else show("s-wait-verdict");
    } else if (st.phase === "reveal") { buildReveal(g); show("s-reveal"); }
  }

  // three-player: how many of the two people a game needs are here (updated by the server)
  function showLone() {
    const box = $("lone-count"), l = st.lone;
    if (!box || !l) return;
    box.textContent = l.here >= l.needed ? t("Someone else is here: your game is starting…")
      : t("You are the only person waiting right now ({here} of {needed} needed).", { here: l.here, needed: l.needed });
  }

  function convTitle(g, c) {
    if (g.role === "witness") return t("Interrogator");
    return g.convs.length > 1 ? t("Witness {seat}", { seat: c }) : t("Witness");
  }

  function buildGame(g) {
    $("role-line").textContent = g.role === "interrogator"
      ? (g.convs.length > 1 ? t("You are the interrogator. One of them is human, the other an AI.")
                            : t("You are the interrogator. Is the witness a human or an AI?"))
      : t("You are a witness. Convince the interrogator that you are human.");
    $("btn-verdict").hidden = g.role !== "interrogator";
    const box = $("convs");
    const had = document.activeElement && document.activeElement.closest(".conv textarea") ? document.activeElement.closest(".conv").dataset.conv : null;
    box.replaceChildren();
    box.classList.toggle("two", g.convs.length > 1);
    $("s-game").classList.toggle("two", g.convs.length > 1);
    buildTabs(g);
    for (const c of g.convs) {
      const pane = el("section", "conv" + (c === activeConv ? " active" : "")); pane.dataset.conv = c;
      pane.id = "conv-" + c; pane.setAttribute("aria-labelledby", "conv-title-" + c);
      if (g.convs.length > 1) pane.setAttribute("role", "tabpanel");
      const title = el("h2", "conv-title", convTitle(g, c)); title.id = "conv-title-" + c; pane.append(title);
      const list = el("ol", "msgs"); pane.append(list);
      list.tabIndex = 0; list.setAttribute("aria-label", t("Messages with {who}", { who: convTitle(g, c) }));
      const typing = el("div", "typing", t("typing…")); typing.hidden = !g.typing.includes(c); pane.append(typing);
      const form = el("form", "compose");
      const ta = el("textarea"); ta.rows = 2; ta.maxLength = g.max_chars; ta.placeholder = t("Type a message");
      ta.setAttribute("aria-label", t("Message to {who}", { who: convTitle(g, c) }));
      const counter = el("span", "counter", "0/" + g.max_chars);
      counter.setAttribute("aria-label", t("characters used"));
      const btn = el("button", "primary", t("Send")); btn.type = "submit";
      form.append(ta, counter, btn); pane.append(form);
      ta.value = store.getItem(draftKey(g, c)) || "";
      counter.textContent = ta.value.length + "/" + g.max_chars;
      ta.addEventListener("input", () => {
        store.setItem(draftKey(g, c), ta.value);
        counter.textContent = ta.value.length + "/" + g.max_chars;
        counter.classList.toggle("over", ta.value.length >= g.max_chars);
      });
      if (g.block_paste) {
        const block = (e) => { e.preventDefault(); send({ type: "paste", conv: c }); toast(t("Pasting is not allowed: please type your message.")); };
        ta.addEventListener("paste", block); ta.addEventListener("drop", block);
      }
      ta.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } });
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const text = ta.value.trim();
        if (!text) return;
        const m = { conv: c, text: text, client_id: rid(), game_id: g.game_id };
        outbox.push(m); saveOutbox();
        store.removeItem(draftKey(g, c));
        send({ type: "message", conv: c, text: text, client_id: m.client_id });
        const b = addMessage({ conv: c, from: "you", text: text }); b.dataset.cid = m.client_id;
        ta.value = ""; ta.dispatchEvent(new Event("input"));
      });
      box.append(pane);
      for (const m of g.messages.filter((m) => m.conv === c)) addMessage(m);
      for (const m of outbox.filter((m) => m.conv === c)) {
        const b = addMessage({ conv: c, from: "you", text: m.text }); b.dataset.cid = m.client_id;
      }
      updateCompose(c);
      if (had === c) ta.focus({ preventScroll: true });  // a rebuilt chat keeps the keyboard where it was
    }
    updateBelief(false);
  }

  // ---- three-player on a phone: one conversation at a time, as tabs (CSS shows both side by
  // side on a wide screen and hides the tabs); a tab counts the replies not yet seen there
  let activeConv = null, tabsGame = null;
  const unread = {};
  function buildTabs(g) {
    const tabs = $("conv-tabs");
    if (tabsGame !== g.game_id || !g.convs.includes(activeConv)) {
      tabsGame = g.game_id; activeConv = g.convs[0];
      for (const k of Object.keys(unread)) delete unread[k];
    }
    tabs.replaceChildren();
    tabs.hidden = g.convs.length < 2;
    if (tabs.hidden) return;
    for (const c of g.convs) {
      const tab = el("button", "tab", convTitle(g, c)); tab.type = "button"; tab.dataset.conv = c;
      tab.setAttribute("role", "tab"); tab.setAttribute("aria-selected", String(c === activeConv));
      tab.setAttribute("aria-controls", "conv-" + c);
      const n = el("span", "unread", String(unread[c] || "")); n.hidden = !unread[c];
      n.setAttribute("title", t("new messages"));
      tab.append(n);
      tab.onclick = () => selectConv(c);
      tabs.append(tab);
    }
  }
  function selectConv(c) {
    activeConv = c; unread[c] = 0;
    for (const tab of document.querySelectorAll("#conv-tabs .tab")) {
      tab.setAttribute("aria-selected", String(tab.dataset.conv === c));
      if (tab.dataset.conv === c) tab.querySelector(".unread").hidden = true;
    }
    for (const p of document.querySelectorAll(".conv")) p.classList.toggle("active", p.dataset.conv === c);
    const list = document.querySelector('.conv[data-conv="' + c + '"] .msgs');
    if (list) list.scrollTop = list.scrollHeight;
  }
  function markUnread(c, n) {
    const badge = document.querySelector('#conv-tabs .tab[data-conv="' + c + '"] .unread');
    if (!badge) return;
    unread[c] = (unread[c] || 0) + n; badge.textContent = String(unread[c]); badge.hidden = false;
  }

  // ---- belief slider (studies with rules.belief_tracking): after each witness reply the interrogator
  // may say where they stand; each move is a `belief` frame, never seen by a witness
  const belief = $("belief"), range = $("belief-range");
  let beliefTimer = null;
  function beliefEnds(g) {
    return g.convs.length > 1 ? [t("A is the human"), t("B is the human")] : [t("Human"), t("AI")];
  }
  function beliefText(g, v) {
    const [lo, hi] = beliefEnds(g);
    if (v === 50) return t("50: undecided");
    return t("{value}: leaning {side} ({strength} of 100)", { value: v, side: v < 50 ? lo : hi, strength: v < 50 ? 100 - v : v });
  }
  function lastReply(g) {
    const r = g.messages.filter((m) => m.from === "them");
    return r.length ? r[r.length - 1] : null;
  }
  function updateBelief(fresh) {
    const g = st && st.game;
    if (g && g.belief && updateBelief.game !== g.game_id) {  // a new game: the slider starts where it was left, or undecided
      updateBelief.game = g.game_id; clearTimeout(beliefTimer); beliefTimer = null;
      range.value = g.belief.value === null ? 50 : g.belief.value;
    }
    const on = !!(g && g.role === "interrogator" && g.belief && st.phase === "game" && lastReply(g));
    belief.hidden = !on;
    if (!on) return;
    const [lo, hi] = beliefEnds(g);
    $("belief-label").textContent = g.convs.length > 1 ? t("Your guess so far: which one is the human?") : t("Your guess so far: human or AI?");
    $("belief-left").textContent = "0 · " + lo; $("belief-right").textContent = hi + " · 100";
    if (!beliefTimer && g.belief.value !== null && document.activeElement !== range) range.value = g.belief.value;
    range.setAttribute("aria-valuetext", beliefText(g, Number(range.value)));
    $("belief-note").textContent = fresh ? t("New reply: move the slider if your guess changed.") : beliefText(g, Number(range.value));
  }
  range.addEventListener("input", () => {
    if (!st || !st.game) return;
    range.setAttribute("aria-valuetext", beliefText(st.game, Number(range.value)));
    $("belief-note").textContent = beliefText(st.game, Number(range.value));
  });
  function sendBelief() {
    clearTimeout(beliefTimer); beliefTimer = null;
    const g = st && st.game, r = g && lastReply(g);
    if (!r || !g.belief || st.phase !== "game") return;
    const v = parseInt(range.value, 10);
    send({ type: "belief", value: v, after: r.id });
    g.belief = { value: v, after: r.id };
  }
  range.addEventListener("change", () => {  // a release or a key press; sent at most ~3 times a second
    clearTimeout(beliefTimer);
    beliefTimer = setTimeout(sendBelief, 300);
  });

  // a message's time and, for one's own, its mark: "sending…" until the server has stored it (its
  // `ack`), then the time it was stored and a tick. The other side's time is when it was shown (the
  // `t_ms` of its `message` frame). No second tick: whether a witness got or read a message would
  // differ between a person and an AI. Shown by CSS (::after), so the text stays the message alone.
  function stamp(li, m) {
    if (m.id) li.dataset.id = m.id;
    if (m.t_ms === undefined) { li.classList.add("pending"); li.dataset.pending = t("sending…"); li.title = t("Sending…"); return; }
    li.classList.remove("pending");
    li.dataset.time = clock(m.t_ms);
    if (m.from === "you") { li.classList.add("sent"); li.title = t("Sent {time} (saved by the server)", { time: li.dataset.time }); }
  }
  function addMessage(m) {
    const pane = document.querySelector('.conv[data-conv="' + m.conv + '"]');
    const li = el("li", "msg " + (m.from === "you" ? "mine" : "theirs"), m.text);
    stamp(li, m);
    if (pane) { const list = pane.querySelector(".msgs"); list.append(li); list.scrollTop = list.scrollHeight; }
    return li;
  }
  function setTyping(c, on) {
    const t = document.querySelector('.conv[data-conv="' + c + '"] .typing');
    if (t) t.hidden = !on;
  }
  function updateCompose(c) {
    const g = st.game, pane = document.querySelector('.conv[data-conv="' + c + '"]');
    if (!pane) return;
    const open = st.phase === "game" && g.your_turn[c];
    pane.querySelector("button").disabled = !open;
    const none = !g.messages.some((m) => m.conv === c);
    pane.querySelector("textarea").placeholder = st.phase !== "game" ? t("The chat is over")
      : open ? (none && g.role === "interrogator" ? t("You write first: type a message") : t("Type a message"))
      : none ? t("The interrogator writes first…") : t("Wait for a reply…");
  }

  function openVerdict(forced) {
    if (beliefTimer) sendBelief();  // a move still waiting goes before the verdict
    const g = st.game, box = $("choices");
    box.replaceChildren(el("legend", "", g.convs.length > 1 ? t("Which one is the human?") : t("Was the witness a human or an AI?")));
    box.hidden = directional();  // on a directional scale the slider's side is the answer
    const opts = g.convs.length > 1
      ? [["A", t("A is human, B is a machine")], ["B", t("A is a machine, B is human")]]
      : [["human", t("Human")], ["ai", t("AI")]];
    for (const [v, label] of opts) {
      const l = el("label", "choice"); const r = el("input"); r.type = "radio"; r.name = "choice"; r.value = v; r.required = !directional();
      l.append(r, document.createTextNode(" " + label)); box.append(l);
    }
    const conf = $("confidence");
    if (openVerdict.game !== g.game_id) {  // a new game's verdict: the slider starts untouched
      conf.value = directional() ? 0 : Math.round((Number(conf.min) + Number(conf.max)) / 2); conf.classList.add("untouched"); $("conf-out").textContent = t("move the slider");
      openVerdict.game = g.game_id;
    }
    $("verdict-title").textContent = forced ? t("Time is up: your verdict") : t("Your verdict");
    $("btn-back").hidden = forced;
    show("s-verdict");
  }
  $("btn-verdict").onclick = () => openVerdict(false);
  $("btn-back").onclick = () => show("s-game");
  // the slider starts untouched: a click, a drag or an arrow key sets it (even at 50)
  // a scale with a negative end is directional (engine: Rules.directional): below 0 A (two-player: AI), above 0 B (human)
  function directional() { return Number($("confidence").min) < 0; }
  function sideOf(c) { const three = st.game.convs.length > 1; return c < 0 ? (three ? "A" : "ai") : c > 0 ? (three ? "B" : "human") : null; }
  function confTouched() { $("confidence").classList.remove("untouched"); $("conf-out").textContent = $("confidence").value; }
  for (const ev of ["input", "change", "pointerdown", "keydown"]) $("confidence").addEventListener(ev, confTouched);
  $("verdict-form").onsubmit = (e) => {
    e.preventDefault();
    const c = parseInt($("confidence").value, 10);
    if (directional() && !$("confidence").classList.contains("untouched") && c === 0) { toast(t("Move the slider towards the one you think is the human.")); $("confidence").focus(); return; }
    const choice = directional() ? sideOf(c) : new FormData(e.target).get("choice");
    if (!choice) { toast(t("Choose an answer first.")); return; }
    if ($("confidence").classList.contains("untouched")) { toast(directional() ? t("Move the slider towards the one you think is the human.") : t("Set how confident you are: move the slider (or click it) first.")); $("confidence").focus(); return; }
    send({ type: "verdict", choice: choice, confidence: parseInt($("confidence").value, 10), reason: $("reason").value });
    $("reason").value = "";
  };
  // reporting abuse ends the game: a dialog asks first (and for what happened)
  $("btn-report").onclick = () => { $("report-reason").value = ""; $("report-dialog").showModal(); };
  $("btn-report-cancel").onclick = () => $("report-dialog").close();
  $("report-form").onsubmit = (e) => {
    e.preventDefault();
    $("report-dialog").close();
    if (st && st.phase === "game") send({ type: "report", reason: $("report-reason").value.trim() || null });
  };

  // "confidence 70 of 100"; on a scale with negatives "confidence -40 on -100 to 100"
  function confText(c) {
    const s = $("confidence");
    return Number(s.min) < 0 ? t("confidence {value} on {min} to {max}", { value: c, min: s.min, max: s.max })
      : t("confidence {value} of {max}", { value: c, max: s.max });
  }
  // which AI a seat was (sent only with the reveal, after the game): "Witness B: Sierra (local model)"
  function whichAI(body, seat, who) {
    if (seat.kind !== "ai" || !seat.witness) return;
    const p = el("p", "which-ai", t("{who}: ", { who: who }));
    const lookup = t, model = /^language model (.+)$/.exec(seat.about || "");
    const about = model ? t("language model {model}", { model: model[1] }) : lookup(seat.about || "");
    p.append(el("b", "", seat.witness), document.createTextNode(about ? " (" + about + ")" : ""));
    body.append(p);
  }
  // the reveal in the participant's own terms: no seat letters they never saw
  function buildReveal(g) {
    const body = $("reveal-body"); body.replaceChildren();
    const why = { time: t("Time ran out."), report: t("The game was ended by a report of abuse."), left: t("A player left the game."),
      verdict: "", verdict_timeout: t("No verdict was given in time."), researcher: t("The researchers ended this game.") }[g.end_reason] || "";
    if (why) body.append(el("p", "small", why));
    if (!g.reveal) {  // ended by the researchers: nothing about who was who
      body.append(el("p", "reveal-line", t("This game does not count. Thank you for your patience.")));
      surveyPending = surveyDue(); $("btn-done").hidden = false; return;
    }
    const seats = g.reveal.seats, v = g.verdict, three = g.format === "three-player";
    const line = (text) => body.append(el("p", "reveal-line", text));
    const human = (k) => k === "human";
    if (g.role === "interrogator") {
      if (three) for (const c of Object.keys(seats)) line(human(seats[c].kind) ? t("Witness {seat} was a human.", { seat: c }) : t("Witness {seat} was an AI.", { seat: c }));
      else line(human(seats.A.kind) ? t("You were talking to a human.") : t("You were talking to an AI."));
      for (const c of Object.keys(seats)) whichAI(body, seats[c], three ? t("Witness {seat}", { seat: c }) : t("The AI witness"));
      if (v) {
        const conf = confText(v.confidence);
        body.append(el("p", "", three ? t("Your verdict: you said Witness {seat} was the human ({confidence}).", { seat: v.choice, confidence: conf })
          : human(v.choice) ? t("Your verdict: you said a human ({confidence}).", { confidence: conf })
            : t("Your verdict: you said an AI ({confidence}).", { confidence: conf })));
      }
    } else {
      const other = Object.keys(seats).find((c) => c !== g.seat);
      line(three ? (human(seats[other].kind) ? t("You were the human witness; the other witness was a human.") : t("You were the human witness; the other witness was an AI."))
        : t("You were the witness: the interrogator had to decide whether you were a human or an AI."));
      if (three) whichAI(body, seats[other], t("The other witness"));
      if (v) {
        const you = three ? v.choice === g.seat : v.choice === "human", conf = { confidence: confText(v.confidence) };
        body.append(el("p", "", three
          ? (you ? t("The interrogator picked you as the human ({confidence}).", conf) : t("The interrogator thought the AI was the human ({confidence}).", conf))
          : human(v.choice) ? t("The interrogator said you were a human ({confidence}).", conf) : t("The interrogator said you were an AI ({confidence}).", conf)));
        body.append(el("p", you ? "correct" : "wrong", you ? t("You convinced them.") : t("You did not convince them.")));
      }
    }
    if (v && g.role === "interrogator" && g.reveal.correct !== null) {
      body.append(el("p", g.reveal.correct ? "correct" : "wrong", g.reveal.correct ? t("You were right.") : t("You were wrong.")));
    }
    if (v && v.reason) body.append(el("p", "small", t("Reason given: {reason}", { reason: v.reason })));
    if (!v && g.end_reason !== "verdict_timeout") body.append(el("p", "small", t("No verdict was given.")));
    surveyPending = surveyDue();
    $("btn-done").hidden = false;
  }
  // the survey comes after the first game, or (survey_after: last) after the session's last round
  function surveyDue() {
    if (st.participant.survey_done) return false;
    return app.dataset.surveyAfter !== "last" || st.participant.games_played >= Number(app.dataset.rounds);
  }
  for (const b of document.querySelectorAll(".btn-retry")) b.onclick = () => send({ type: "join" });
  $("btn-again").onclick = () => {
    if (surveyPending || surveyDue()) { show("s-survey"); return; }
    send({ type: "join" });
  };
  async function postSurvey(data) {
    const r = await fetch((app.dataset.root || "") + "/p/" + encodeURIComponent(token) + "/survey", { method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": app.dataset.csrf }, body: JSON.stringify(data) });
    if (!r.ok) { const j = await r.json().catch(() => ({})); toast(j.detail || t("Could not save the survey: check your answers.")); return false; }
    return true;
  }
  $("survey-form").onsubmit = async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.target).entries());
    if (await postSurvey(data)) { st.participant.survey_done = true; surveyPending = false; send({ type: "join" }); }
  };
  $("btn-skip").onclick = async () => { if (await postSurvey({ skipped: true })) { st.participant.survey_done = true; surveyPending = false; send({ type: "join" }); } };
  $("btn-join").onclick = () => send({ type: "join" });
  $("btn-next").onclick = () => send({ type: "join" });
  $("btn-leave-queue").onclick = () => send({ type: "leave_queue" });
  $("btn-wait-more").onclick = () => send({ type: "join" });

  const said = {};
  setInterval(() => {
    if (!st) return;
    if (st.phase === "waiting" && st.waiting_since_ms) $("wait-s").textContent = Math.max(0, Math.floor((now() - st.waiting_since_ms) / 1000));
    if (st.game && st.phase === "game") {
      const left = Math.max(0, Math.ceil((st.game.ends_ms - now()) / 1000));
      $("timer").textContent = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
      $("timer").classList.toggle("low", left <= 30);
      // the last minute is said once (and 10 seconds before the end); the timer itself is not a live region
      const game = st.game.game_id;
      if (left <= 60 && left > 55 && said.minute !== game) { said.minute = game; say(t("One minute left.")); }
      if (left <= 10 && left > 5 && said.ten !== game) { said.ten = game; say(t("10 seconds left.")); }
    }
  }, 250);

  connect();
})();
