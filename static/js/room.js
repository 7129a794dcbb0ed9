// Play room client: displays what the server says; the server decides timing, buzzes and rulings.
// The only HTML taken from the server is `answer_html`, which the server builds escaped (judge/render.py).
(() => {
  "use strict";
  const root = document.getElementById("room");
  const slug = root.dataset.room;
  const $ = (id) => document.getElementById(id);
  const el = {
    text: $("text"), status: $("status"), category: $("category"), buzz: $("buzz"), next: $("next"), pause: $("pause"),
    form: $("answer-form"), input: $("answer-input"), label: $("answer-label"), bar: $("deadline-bar"),
    ruling: $("ruling"), answerline: $("answerline"), stats: $("stats"), scores: $("scoreboard"), chatLog: $("chat-log"),
    chatForm: $("chat-form"), chatInput: $("chat-input"), pace: $("pace"), paceOut: $("pace-out"), history: $("history"),
    countdown: $("countdown"), settingsForm: $("settings-form"), setSelect: $("set-select"), catBoxes: $("category-boxes"),
    diffSelect: $("difficulty-select"), diffLabel: $("difficulty-label"), autoNext: $("auto-next"),
    autoNextMs: $("auto-next-ms"), settingsMsg: $("settings-msg"), sound: $("sound"),
  };
  const options = JSON.parse($("room-options").textContent);
  const OFFLINE_KEEP_MS = 60000; // an offline player fades, then leaves the board after this
  const HISTORY_SHOWN = 10;
  let ws = null, me = null, qid = null, words = [], images = [], holder = null, players = {}, retry = 0, deadlineTimer = null, joined = false, rejoinTimer = null;
  let lockedOut = false, paused = false, roomSettings = {}, history = [], countdownTimer = null;
  // A buzz or a `next` sent and not yet answered: pressing again (mashing the key) sends nothing more.
  // (Every buzz and next is answered; should an answer be lost anyway, a press counts again after 3 s.)
  let buzzAsked = null, nextAsked = false, askedAt = 0;
  const ASK_WAIT_MS = 3000;
  const waiting = () => performance.now() - askedAt < ASK_WAIT_MS;
  let applyPending = root.dataset.apply === "1"; // the lobby's settings, applied once on joining
  // the lobby's name (this session) first, then the name this browser used last, then the account's
  let name = root.dataset.lobbyName || localStorage.getItem("thinkalike-name") || root.dataset.defaultName || "";
  if (root.dataset.lobbyName) localStorage.setItem("thinkalike-name", name);

  function send(msg) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg)); }

  // --- sound cues: WebAudio beeps, off unless the player turns them on ---------------------------------
  let audio = null;
  el.sound.checked = localStorage.getItem("thinkalike-sound") === "1";
  el.sound.addEventListener("change", () => {
    localStorage.setItem("thinkalike-sound", el.sound.checked ? "1" : "0");
    if (el.sound.checked) beep([660], 80);
  });
  function beep(freqs, ms) {
    if (!el.sound.checked) return;
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      let t = audio.currentTime;
      for (const f of freqs) {
        const osc = audio.createOscillator(), gain = audio.createGain();
        osc.frequency.value = f; gain.gain.setValueAtTime(0.15, t); gain.gain.exponentialRampToValueAtTime(0.001, t + ms / 1000);
        osc.connect(gain).connect(audio.destination); osc.start(t); osc.stop(t + ms / 1000);
        t += ms / 1000;
      }
    } catch (e) { /* no audio: silent */ }
  }

  // --- the text ---------------------------------------------------------------------------------------
  function imagePlaceholder() {
    const span = document.createElement("span");
    span.className = "img-ph"; span.textContent = "[image]"; span.title = "This question refers to an image";
    return span;
  }
  function renderText() {
    if (!images.length) { el.text.textContent = words.join(" "); return; }
    el.text.replaceChildren();
    words.forEach((w, i) => {
      if (images.includes(i)) el.text.append(imagePlaceholder(), " ");
      el.text.append(w + " ");
    });
  }
  // After a tossup: every word, with a marker where each player buzzed (after the last word they heard).
  function renderEndText(m) {
    el.text.replaceChildren();
    const at = {};
    for (const b of m.buzzes || []) (at[b.word_index] = at[b.word_index] || []).push(b);
    const imgs = m.images || [];
    const marks = (i) => (at[i] || []).forEach((b) => {
      const mark = document.createElement("span");
      mark.className = "buzz-mark " + (b.verdict === "accept" ? "accept" : "reject");
      mark.textContent = (b.verdict === "accept" ? "✓ " : "✗ ") + b.name;
      mark.title = `${b.name}: ${b.verdict === "accept" ? "correct" : "wrong"} (${b.points > 0 ? "+" : ""}${b.points}) after word ${b.word_index}`;
      el.text.append(mark, " ");
    });
    marks(0);
    m.words.forEach((w, i) => {
      if (imgs.includes(i)) el.text.append(imagePlaceholder(), " ");
      if (m.power_index !== null && m.power_index !== undefined && i === m.power_index) {
        const p = document.createElement("span"); p.className = "power-mark"; p.textContent = "(*)"; el.text.append(p, " ");
      }
      el.text.append(w + " ");
      marks(i + 1);
    });
    if (imgs.includes(m.words.length)) el.text.append(imagePlaceholder());
  }

  function setStatus(s) { el.status.textContent = s; }
  function canBuzz() { return qid && holder === null && !lockedOut && !paused && !(buzzAsked === qid && waiting()); }
  function refreshButtons() {
    el.buzz.disabled = !canBuzz();
    el.pause.textContent = paused ? "Resume " : "Pause ";
    const k = document.createElement("kbd"); k.textContent = "p"; el.pause.append(k);
    el.pause.setAttribute("aria-pressed", paused ? "true" : "false");
  }

  // `ms` left of `total` (a reload while answering has less than the whole answer time left)
  function startDeadline(ms, total) {
    clearInterval(deadlineTimer);
    const end = performance.now() + ms, whole = Math.max(ms, total || 0);
    el.bar.style.width = (100 * ms / whole) + "%";
    deadlineTimer = setInterval(() => {
      const left = Math.max(0, end - performance.now());
      el.bar.style.width = (100 * left / whole) + "%";
      if (left <= 0) clearInterval(deadlineTimer);
    }, 50);
  }
  function showAnswerBox(label) {
    el.label.textContent = label; el.form.hidden = false; el.input.value = ""; el.input.focus();
  }
  function hideAnswerBox() { el.form.hidden = true; clearInterval(deadlineTimer); }

  // --- auto-advance countdown (the server starts the tossup; this only shows the wait) -------------------
  function startCountdown(ms) {
    stopCountdown();
    if (!ms) return;
    const end = performance.now() + ms;
    const tick = () => {
      const left = Math.ceil((end - performance.now()) / 1000);
      el.countdown.hidden = false;
      el.countdown.textContent = left > 0 ? `Next tossup in ${left} s` : "Next tossup…";
    };
    tick(); countdownTimer = setInterval(tick, 250);
  }
  function stopCountdown() { clearInterval(countdownTimer); el.countdown.hidden = true; }

  // --- the scoreboard: every player once, online ones first; offline ones fade, then leave ---------------
  function mergePlayers(list, fromHello) {
    const now = Date.now();
    for (const p of list) {
      const old = players[p.id];
      const merged = Object.assign({online: true}, old || {}, p);
      if (!merged.online) merged.offlineSince = (old && !old.online && old.offlineSince) || now;
      else delete merged.offlineSince;
      if (fromHello && !merged.online) merged.offlineSince = now;
      players[p.id] = merged;
    }
    renderScores();
  }
  function renderScores() {
    const now = Date.now();
    el.scores.replaceChildren();
    const list = Object.values(players)
      .filter((p) => p.online || p.id === me || now - (p.offlineSince || now) < OFFLINE_KEEP_MS)
      .sort((a, b) => (b.online - a.online) || (b.score - a.score) || (a.id - b.id));
    for (const p of list) {
      const li = document.createElement("li");
      li.className = (p.online ? "online" : "offline") + (p.id === me ? " me" : "");
      li.dataset.player = p.id;
      const n = document.createElement("span"); n.textContent = p.name + (p.id === me ? " (you)" : "");
      if (p.bot) { const b = document.createElement("span"); b.className = "badge bot"; b.textContent = "bot"; b.title = "an AI agent"; n.append(" ", b); }
      const s = document.createElement("b"); s.textContent = p.score; s.className = "score";
      li.append(n, s);
      el.scores.append(li);
    }
  }
  setInterval(renderScores, 5000);

  // --- history -------------------------------------------------------------------------------------------
  function statsText(st) {
    if (!st) return "";
    const pct = (x) => (x === null || x === undefined ? "–" : Math.round(100 * x) + "%");
    const avg = st.avg_buzz_word === null || st.avg_buzz_word === undefined ? "–" : `word ${st.avg_buzz_word} of ${st.n_words}`;
    return `Heard by ${st.heard} · converted ${pct(st.conversion)} · powered ${pct(st.power_rate)} · average correct buzz ${avg}`;
  }
  function reportButton(reportQid) {
    const btn = document.createElement("button");
    btn.type = "button"; btn.className = "link"; btn.textContent = "I was right";
    btn.title = "Ask a researcher to review this ruling";
    btn.addEventListener("click", () => { send({type: "report", qid: reportQid}); btn.disabled = true; btn.textContent = "Reported"; });
    return btn;
  }
  function renderHistory() {
    el.history.replaceChildren();
    if (!history.length) {
      const li = document.createElement("li"); li.className = "muted small empty"; li.textContent = "Tossups of this room appear here.";
      el.history.append(li); return;
    }
    for (const h of history.slice().reverse()) {
      const li = document.createElement("li");
      li.className = "history-entry"; li.dataset.qid = h.qid;
      const head = document.createElement("div");
      if (h.category) { const c = document.createElement("span"); c.className = "pill"; c.textContent = h.category; head.append(c, " "); }
      const ans = document.createElement("span"); ans.className = "answer-html";
      ans.innerHTML = h.answer_html; // built escaped by the server: only its own <b><u> tags
      head.append(ans);
      li.append(head);
      const ul = document.createElement("ul"); ul.className = "buzzes";
      if (!h.buzzes.length) { const b = document.createElement("li"); b.className = "muted small"; b.textContent = h.reason === "skipped" ? "skipped, no buzz" : "no buzz"; ul.append(b); }
      for (const b of h.buzzes) {
        const item = document.createElement("li");
        item.className = "small " + (b.verdict === "accept" ? "accept" : "reject");
        const pts = b.points ? ` (${b.points > 0 ? "+" : ""}${b.points})` : "";
        item.textContent = `${b.verdict === "accept" ? "✓" : "✗"} ${b.name}: “${b.text || "no answer"}” at word ${b.word_index}${b.word ? " (" + b.word + ")" : ""}${pts}`;
        if (b.player_id === me && b.verdict !== "accept" && b.text) item.append(" ", reportButton(h.qid));
        ul.append(item);
      }
      li.append(ul);
      const st = document.createElement("div"); st.className = "muted small stats-line"; st.textContent = statsText(h.stats);
      li.append(st);
      el.history.append(li);
    }
  }
  function entryFromEnd(m) {
    return {
      qid: m.qid, item_id: m.item_id, category: m.category, answer_html: m.answer_html, reason: m.reason,
      n_words: m.words.length,
      buzzes: (m.buzzes || []).map((b) => Object.assign({word: b.word_index > 0 ? m.words[b.word_index - 1] : ""}, b)),
    };
  }

  // --- settings --------------------------------------------------------------------------------------
  for (const s of options.sets) {
    const o = document.createElement("option"); o.value = s.slug; o.textContent = `${s.name} (${s.n})`; el.setSelect.append(o);
  }
  for (const c of options.categories) {
    const l = document.createElement("label"); l.className = "inline small";
    const box = document.createElement("input"); box.type = "checkbox"; box.value = c; box.name = "categories";
    l.append(box, " " + c); el.catBoxes.append(l);
  }
  function fillDifficulties(setSlug, chosen) {
    const labels = setSlug ? (options.difficulties[setSlug] || []) : [...new Set(Object.values(options.difficulties).flat())].sort();
    el.diffSelect.replaceChildren();
    const any = document.createElement("option"); any.value = ""; any.textContent = "any"; el.diffSelect.append(any);
    for (const d of labels) { const o = document.createElement("option"); o.value = d; o.textContent = d; el.diffSelect.append(o); }
    el.diffSelect.value = labels.includes(chosen) ? chosen : "";
    el.diffLabel.hidden = !labels.length; // only where the set has difficulties
  }
  el.setSelect.addEventListener("change", () => fillDifficulties(el.setSelect.value, el.diffSelect.value));
  function showSettings(s) {
    roomSettings = s;
    el.pace.value = s.ms_per_word; el.paceOut.textContent = s.ms_per_word + " ms/word";
    el.setSelect.value = s.set || "";
    const cats = (s.categories && s.categories.length ? s.categories : (s.category ? [s.category] : [])).map((c) => c.toLowerCase());
    for (const box of el.catBoxes.querySelectorAll("input")) box.checked = cats.includes(box.value.toLowerCase());
    fillDifficulties(s.set || "", s.difficulty || "");
    el.autoNext.checked = !!s.auto_next;
    el.autoNextMs.value = String(s.auto_next_ms || 5000);
    if (![...el.autoNextMs.options].some((o) => o.value === el.autoNextMs.value)) {
      const o = document.createElement("option"); o.value = String(s.auto_next_ms); o.textContent = (s.auto_next_ms / 1000) + " s";
      el.autoNextMs.append(o); el.autoNextMs.value = o.value;
    }
  }
  function settingsFromForm() {
    return {
      type: "settings", set: el.setSelect.value, category: "",
      categories: [...el.catBoxes.querySelectorAll("input:checked")].map((b) => b.value),
      difficulty: el.diffLabel.hidden ? "" : el.diffSelect.value, ms_per_word: Number(el.pace.value),
      auto_next: el.autoNext.checked ? 1 : 0, auto_next_ms: Number(el.autoNextMs.value),
    };
  }
  let settingsAsked = "";
  function askSettings(msg, why) { settingsAsked = why; send(msg); }
  el.settingsForm.addEventListener("submit", (e) => { e.preventDefault(); askSettings(settingsFromForm(), "room"); });
  el.pace.addEventListener("input", () => { el.paceOut.textContent = el.pace.value + " ms/word"; });

  // The lobby's choices, from the page's query string: sent as a `settings` message once joined, so
  // they reach a room that existed already too (or the player is told why not).
  function lobbySettings() {
    const q = new URLSearchParams(root.dataset.query || "");
    const msg = {type: "settings"};
    for (const [k, v] of q) {
      if (k === "categories") msg.categories = v.split(",").map((c) => c.trim()).filter(Boolean);
      else if (["ms_per_word", "answer_ms", "dead_ms", "auto_next", "auto_next_ms"].includes(k)) msg[k] = Number(v);
      else msg[k] = v;
    }
    return msg;
  }
  function differs(msg, s) {
    return Object.keys(msg).some((k) => k !== "type" && JSON.stringify(msg[k]) !== JSON.stringify(s[k]));
  }

  // Bots: the room's `bots` setting lists the AI agents playing; the moderator adds and removes them.
  const botsAvailable = JSON.parse(($("bots-available") || {}).textContent || "[]");
  function renderBots(settings) {
    const listed = settings.bots || [];
    const list = $("bot-list"), pick = $("bot-pick");
    if (!list) return;
    list.replaceChildren();
    for (const name of listed) {
      const li = document.createElement("li"); li.textContent = name + " ";
      const rm = document.createElement("button"); rm.type = "button"; rm.textContent = "Remove";
      rm.addEventListener("click", () => askSettings({type: "settings", bots: {remove: name}}, "room"));
      li.append(rm); list.append(li);
    }
    pick.replaceChildren();
    for (const name of botsAvailable.filter((n) => !listed.includes(n))) {
      const o = document.createElement("option"); o.value = o.textContent = name; pick.append(o);
    }
    $("bot-add").disabled = !pick.options.length;
    $("bot-none").hidden = botsAvailable.length > 0;
  }

  const ERROR_REPEAT_MS = 5000;
  let lastError = {text: "", at: 0};
  function addChat(who, text, cls) {
    const line = document.createElement("div");
    line.className = "chat-line " + (cls || "");
    if (who) { const b = document.createElement("b"); b.textContent = who + ": "; line.append(b); }
    line.append(document.createTextNode(text));
    el.chatLog.append(line);
    el.chatLog.scrollTop = el.chatLog.scrollHeight;
  }
  function nameOf(id) { return (players[id] && players[id].name) || "player " + id; }

  function showAnswerLine(html) {
    el.answerline.hidden = false;
    el.answerline.replaceChildren();
    const label = document.createElement("b"); label.textContent = "Answer: ";
    const ans = document.createElement("span"); ans.className = "answer-html";
    ans.innerHTML = html; // escaped by the server (judge/render.py): never the item's raw HTML
    el.answerline.append(label, ans);
  }

  const handlers = {
    hello(m) {
      me = m.player_id; retry = 0; joined = true; buzzAsked = null; nextAsked = false;
      const st = m.state;
      players = {}; mergePlayers(st.players, true);
      showSettings(st.settings);
      paused = !!st.paused;
      history = (st.history || []).slice(-HISTORY_SHOWN); renderHistory();
      renderBots(st.settings);
      el.chatLog.replaceChildren();
      (st.chat || []).forEach((c) => addChat(c.name, c.text));
      if (st.qid) {
        qid = st.qid; words = st.words.slice(); images = st.images || []; el.category.textContent = st.category || "";
        holder = st.buzz ? st.buzz.player_id : null; lockedOut = (st.locked_out || []).includes(me);
        el.answerline.hidden = true; el.stats.hidden = true; renderText();
        setStatus(paused ? "Paused." : holder === me ? "You are answering" : holder !== null ? nameOf(holder) + " is answering" : "Reading…");
        if (holder === me) { showAnswerBox(st.buzz.prompted ? "Prompt: be more specific" : "Your answer"); startDeadline(st.buzz.deadline_ms, st.settings.answer_ms); }
      } else {
        qid = null; setStatus(paused ? "Paused." : "Press Next (n) to start a tossup.");
      }
      startCountdown(st.next_in_ms);
      refreshButtons();
      if (applyPending) {
        applyPending = false;
        const wanted = lobbySettings();
        if (differs(wanted, st.settings)) askSettings(wanted, "lobby");
      }
    },
    tossup(m) {
      qid = m.qid; words = []; images = m.images || []; holder = null; lockedOut = false; stopCountdown();
      buzzAsked = null; nextAsked = false;
      el.category.textContent = m.category || ""; el.ruling.textContent = ""; el.answerline.hidden = true; el.stats.hidden = true;
      renderText(); hideAnswerBox(); setStatus(paused ? "Paused." : "Reading…"); refreshButtons();
    },
    words(m) {
      if (m.qid !== qid) return;
      // A gap means messages were lost (a server went away): ask for what is missing.
      if (m.start > words.length) send({type: "sync", qid, have: words.length});
      m.words.forEach((w, i) => { words[m.start + i] = w; });
      renderText();
    },
    buzz(m) {
      if (m.qid !== qid) return;
      holder = m.player_id; buzzAsked = null;
      beep([520], 120);
      if (holder === me) { lockedOut = true; showAnswerBox("Your answer"); startDeadline(m.deadline_ms); }
      setStatus(holder === me ? "You buzzed" : nameOf(holder) + " buzzed");
      refreshButtons();
    },
    ruling(m) {
      if (m.qid !== qid) return;
      const who = m.player_id === me ? "You" : nameOf(m.player_id);
      const said = m.text ? "“" + m.text + "”" : "(no answer)";
      if (m.verdict === "prompt") {
        beep([440, 440], 90);
        el.ruling.textContent = who + ": " + said + " — prompt" + (m.prompt ? ": " + m.prompt : "");
        el.ruling.className = "ruling prompt";
        if (m.player_id === me) { showAnswerBox(m.prompt || "Prompt: be more specific"); startDeadline(m.deadline_ms || 8000); }
        return;
      }
      beep(m.verdict === "accept" ? [660, 990] : [300, 200], 130);
      const pts = m.points ? " (" + (m.points > 0 ? "+" : "") + m.points + ")" : "";
      el.ruling.textContent = who + ": " + said + " — " + (m.verdict === "accept" ? "correct" : "incorrect") + pts;
      el.ruling.className = "ruling " + m.verdict;
      if (m.player_id === me && m.verdict === "reject" && m.text) el.ruling.append(" ", reportButton(m.qid));
      if (m.player_id === me) hideAnswerBox();
      holder = null;
      setStatus(m.verdict === "accept" ? "" : paused ? "Paused." : "Reading…");
      refreshButtons();
    },
    tossup_end(m) {
      if (m.qid !== qid) return;
      qid = null; holder = null; hideAnswerBox();
      renderEndText(m);
      showAnswerLine(m.answer_html);
      el.stats.hidden = true;
      history.push(entryFromEnd(m)); history = history.slice(-HISTORY_SHOWN); renderHistory();
      setStatus({answered: "Answered.", timeout: "Time.", skipped: "Skipped."}[m.reason] + " Press Next (n).");
      startCountdown(m.next_in_ms);
      refreshButtons();
    },
    stats(m) {
      const h = history.find((e) => e.qid === m.qid);
      if (h) { h.stats = m; renderHistory(); }
      if (!qid && history.length && history[history.length - 1].qid === m.qid) { el.stats.hidden = false; el.stats.textContent = statsText(m); }
    },
    history(m) { history = (m.tossups || []).slice(-HISTORY_SHOWN); renderHistory(); },
    paused(m) {
      paused = m.paused;
      const by = m.player_id ? (m.player_id === me ? "you" : nameOf(m.player_id)) : "the room";
      setStatus(paused ? `Paused by ${by}.` : qid ? "Reading…" : "Press Next (n) to start a tossup.");
      if (paused) stopCountdown(); else startCountdown(m.next_in_ms);
      refreshButtons();
    },
    scores(m) { mergePlayers(m.players); },
    presence(m) { mergePlayers(m.players); },
    chat(m) { addChat(m.name, m.text); },
    reported() { addChat("", "Thanks — a researcher will review that ruling.", "note"); },
    settings(m) {
      showSettings(m.settings);
      if (settingsAsked) {
        const said = el.settingsMsg.textContent = settingsAsked === "lobby" ? "Your lobby settings were applied." : "Settings applied.";
        el.settingsMsg.className = "small ok"; settingsAsked = "";
        setTimeout(() => { if (el.settingsMsg.textContent === said) el.settingsMsg.textContent = ""; }, 10000); // a confirmation, not a state
      }
      startCountdown(m.next_in_ms);
      renderBots(m.settings);
    },
    error(m) {
      // a crowd joining at once, or the server's database out for a moment: ask again, spread out
      if (!joined && (m.code === "too_fast" || m.code === "busy" || m.code === "unavailable")) {
        setStatus(m.code === "unavailable" ? "The server cannot reach its database; joining again…" : "The room is busy; joining again…");
        if (!rejoinTimer) {
          const sock = ws; // a timer of an earlier socket must not join on a newer one
          rejoinTimer = setTimeout(() => {
            rejoinTimer = null;
            if (!joined && ws === sock && sock.readyState === WebSocket.OPEN) send({type: "join", name});
          }, 1000 + Math.random() * 2000);
        }
        return;
      }
      if (m.code === "already_joined") return; // a join asked again while the first still waited its turn
      if (m.code === "bad_name" && !joined) { // a name this browser remembers is not forgotten by a reload
        localStorage.removeItem("thinkalike-name");
        setStatus("Choose another name.");
        askName(m.message);
        return;
      }
      const askedNext = nextAsked;
      const keepsNext = ["buzzer_taken", "locked_out", "paused", "no_tossup"].includes(m.code);
      // unavailable: the server's database is out for a moment; nothing was done, and the player may try again
      if (keepsNext || m.code === "unavailable") { buzzAsked = null; refreshButtons(); }
      if (!keepsNext) nextAsked = false;
      if (m.code === "unavailable") setStatus("The server cannot reach its database right now; try again in a moment.");
      if (m.code === "buzzer_taken") { setStatus("Too slow — someone else buzzed first."); return; }
      if (m.code === "locked_out" && holder === me) return; // a second buzz of ours (another tab): we hold it
      // our Next crossed another player's, whose tossup is already being read: nothing to tell
      if (m.code === "busy" && askedNext && qid && holder === null) return;
      if (settingsAsked && (m.code === "bad_settings" || m.code === "busy" || m.code === "unavailable")) {
        el.settingsMsg.className = "small error";
        el.settingsMsg.textContent = (settingsAsked === "lobby" ? "Your lobby settings were not applied: " : "Not applied: ") + m.message;
        settingsAsked = "";
        return;
      }
      // the same refusal again within a few seconds (a chatter over its share): one line, not one a message
      const now = Date.now();
      if (lastError.text === m.message && now - lastError.at < ERROR_REPEAT_MS) { lastError.at = now; return; }
      lastError = {text: m.message, at: now};
      addChat("", "⚠ " + m.message, "error");
    },
  };

  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const q = root.dataset.query ? "?" + root.dataset.query : "";
    ws = new WebSocket(`${proto}://${location.host}/ws/play/${slug}/${q}`);
    joined = false;
    if (rejoinTimer) { clearTimeout(rejoinTimer); rejoinTimer = null; }
    ws.onopen = () => { setStatus("Joining…"); send({type: "join", name}); };
    ws.onmessage = (ev) => {
      let m; try { m = JSON.parse(ev.data); } catch (e) { return; }
      (handlers[m.type] || (() => {}))(m);
    };
    ws.onclose = (ev) => {
      el.buzz.disabled = true; buzzAsked = null; nextAsked = false;
      if (ev.code === 4029) { setStatus("Too many open connections from this browser or network; close other tabs and reload."); return; }
      setStatus(ev.code === 4008 ? "Disconnected for sending too fast; reconnecting…" : "Disconnected, reconnecting…");
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 300 * 2 ** retry);
    };
  }

  function buzz() { if (canBuzz()) { buzzAsked = qid; askedAt = performance.now(); refreshButtons(); send({type: "buzz", qid}); } }
  el.buzz.addEventListener("click", buzz);
  // With a tossup running, Next names it: that skips it, and two players pressing Next at once skip only one.
  const next = () => {
    if (nextAsked && waiting()) return; // answered by a tossup (or an error): one press, one tossup
    nextAsked = true; askedAt = performance.now();
    send(qid ? {type: "next", qid} : {type: "next"});
  };
  el.next.addEventListener("click", next);
  const togglePause = () => send({type: "pause", paused: !paused});
  el.pause.addEventListener("click", togglePause);
  // The space that buzzed (held, or pressed again) lands in the answer box once it opens: a leading
  // space is never part of an answer.
  el.input.addEventListener("keydown", (e) => { if (e.code === "Space" && !el.input.value.trim()) e.preventDefault(); });
  el.form.addEventListener("submit", (e) => { e.preventDefault(); send({type: "answer", qid, text: el.input.value}); });
  el.chatForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (el.chatInput.value.trim()) send({type: "chat", text: el.chatInput.value});
    el.chatInput.value = "";
  });
  // like the other settings: applied, or why not ("between tossups"), in the Settings card, not the chat
  $("bot-add").addEventListener("click", () => { const n = $("bot-pick").value; if (n) askSettings({type: "settings", bots: {add: n}}, "room"); });
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    // Esc leaves a text field (after a chat line, space buzzes again), as on the annotation pages
    if (typing && e.key === "Escape" && document.activeElement !== $("name-input")) { document.activeElement.blur(); return; }
    if (typing) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return; // the browser's shortcuts (Ctrl+P prints), not ours
    if (e.code === "Space") { e.preventDefault(); if (!e.repeat) buzz(); }
    else if (e.repeat) { /* a held key acts once */ }
    else if (e.key === "n") { next(); }
    else if (e.key === "p") { togglePause(); }
  });

  // The name dialog: when no name is known, and again when the server refuses the name (bad_name),
  // with its reason. It cannot be dismissed (Escape) without a name: the page would never join.
  const dlg = $("name-dialog");
  let naming = false;
  function askName(why) {
    naming = true;
    $("name-error").textContent = why || ""; $("name-error").hidden = !why;
    // offered again without the characters a room refuses (invisible ones: resending it as it looks fails again)
    $("name-input").value = why ? name.replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}]/gu, "") : "";
    if (!dlg.open) dlg.showModal();
    $("name-input").focus();
  }
  dlg.addEventListener("cancel", (e) => e.preventDefault());
  dlg.addEventListener("close", () => { if (naming) dlg.showModal(); }); // an Escape Chrome let through
  $("name-form").addEventListener("submit", () => {
    naming = false;
    name = $("name-input").value.trim().slice(0, 40) || "guest";
    localStorage.setItem("thinkalike-name", name);
    if (ws && ws.readyState === WebSocket.OPEN && !joined) { setStatus("Joining…"); send({type: "join", name}); } // the socket stays open after bad_name
    else if (!ws) connect();
  });
  if (name) connect();
  else askName("");
})();
