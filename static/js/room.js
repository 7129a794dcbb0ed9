// Play room client: displays what the server says; the server decides timing, buzzes and rulings.
(() => {
  "use strict";
  const root = document.getElementById("room");
  const slug = root.dataset.room;
  const $ = (id) => document.getElementById(id);
  const el = {
    text: $("text"), status: $("status"), category: $("category"), buzz: $("buzz"), next: $("next"),
    form: $("answer-form"), input: $("answer-input"), label: $("answer-label"), bar: $("deadline-bar"),
    ruling: $("ruling"), answerline: $("answerline"), scores: $("scoreboard"), chatLog: $("chat-log"),
    chatForm: $("chat-form"), chatInput: $("chat-input"), pace: $("pace"), paceOut: $("pace-out"),
  };
  let ws = null, me = null, qid = null, words = [], holder = null, players = {}, retry = 0, deadlineTimer = null;
  let name = localStorage.getItem("thinkalike-name") || root.dataset.defaultName || "";

  function send(msg) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg)); }

  function renderText() {
    el.text.textContent = words.join(" ");
  }

  function setStatus(s) { el.status.textContent = s; }

  function canBuzz() { return qid && holder === null && !lockedOut; }
  let lockedOut = false;
  function refreshButtons() { el.buzz.disabled = !canBuzz(); }

  function startDeadline(ms) {
    clearInterval(deadlineTimer);
    const end = performance.now() + ms;
    el.bar.style.width = "100%";
    deadlineTimer = setInterval(() => {
      const left = Math.max(0, end - performance.now());
      el.bar.style.width = (100 * left / ms) + "%";
      if (left <= 0) clearInterval(deadlineTimer);
    }, 50);
  }

  function showAnswerBox(label) {
    el.label.textContent = label;
    el.form.hidden = false;
    el.input.value = "";
    el.input.focus();
  }
  function hideAnswerBox() { el.form.hidden = true; clearInterval(deadlineTimer); }

  // The scoreboard: every player once, online ones first, by score. `scores` brings the whole list,
  // `presence` only the players who came or went.
  function mergePlayers(list) {
    for (const p of list) players[p.id] = Object.assign({online: true}, players[p.id] || {}, p);
    renderScores();
  }
  function renderScores() {
    el.scores.replaceChildren();
    const list = Object.values(players).sort((a, b) => (b.online - a.online) || (b.score - a.score) || (a.id - b.id));
    for (const p of list) {
      const li = document.createElement("li");
      li.className = (p.online ? "online" : "offline") + (p.id === me ? " me" : "");
      const n = document.createElement("span"); n.textContent = p.name + (p.id === me ? " (you)" : "");
      if (p.bot) { const b = document.createElement("span"); b.className = "badge bot"; b.textContent = "bot"; b.title = "an AI agent"; n.append(" ", b); }
      const s = document.createElement("b"); s.textContent = p.score; s.className = "score";
      li.append(n, s);
      el.scores.append(li);
    }
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
      rm.addEventListener("click", () => send({type: "settings", bots: {remove: name}}));
      li.append(rm); list.append(li);
    }
    pick.replaceChildren();
    for (const name of botsAvailable.filter((n) => !listed.includes(n))) {
      const o = document.createElement("option"); o.value = o.textContent = name; pick.append(o);
    }
    $("bot-add").disabled = !pick.options.length;
    $("bot-none").hidden = botsAvailable.length > 0;
  }

  function addChat(who, text, cls) {
    const line = document.createElement("div");
    line.className = "chat-line " + (cls || "");
    if (who) { const b = document.createElement("b"); b.textContent = who + ": "; line.append(b); }
    line.append(document.createTextNode(text));
    el.chatLog.append(line);
    el.chatLog.scrollTop = el.chatLog.scrollHeight;
  }

  function nameOf(id) { return (players[id] && players[id].name) || "player " + id; }

  const handlers = {
    hello(m) {
      me = m.player_id; retry = 0;
      const st = m.state;
      players = {}; mergePlayers(st.players);
      el.pace.value = st.settings.ms_per_word; el.paceOut.textContent = st.settings.ms_per_word + " ms/word";
      renderBots(st.settings);
      el.chatLog.replaceChildren();
      (st.chat || []).forEach((c) => addChat(c.name, c.text));
      if (st.qid) {
        qid = st.qid; words = st.words.slice(); el.category.textContent = st.category || "";
        holder = st.buzz ? st.buzz.player_id : null; lockedOut = (st.locked_out || []).includes(me);
        el.answerline.hidden = true; renderText();
        setStatus(holder !== null ? nameOf(holder) + " is answering" : "Reading…");
        if (holder === me) { showAnswerBox(st.buzz.prompted ? "Prompt: be more specific" : "Your answer"); startDeadline(st.buzz.deadline_ms); }
      } else {
        qid = null; setStatus("Press Next (n) to start a tossup.");
      }
      refreshButtons();
    },
    tossup(m) {
      qid = m.qid; words = []; holder = null; lockedOut = false;
      el.category.textContent = m.category || ""; el.ruling.textContent = ""; el.answerline.hidden = true;
      renderText(); hideAnswerBox(); setStatus("Reading…"); refreshButtons();
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
      holder = m.player_id;
      if (holder === me) { lockedOut = true; showAnswerBox("Your answer"); startDeadline(m.deadline_ms); }
      setStatus(nameOf(holder) + " buzzed");
      refreshButtons();
    },
    ruling(m) {
      if (m.qid !== qid) return;
      const who = m.player_id === me ? "You" : nameOf(m.player_id);
      const said = m.text ? "“" + m.text + "”" : "(no answer)";
      if (m.verdict === "prompt") {
        el.ruling.textContent = who + ": " + said + " — prompt" + (m.prompt ? ": " + m.prompt : "");
        el.ruling.className = "ruling prompt";
        if (m.player_id === me) { showAnswerBox(m.prompt || "Prompt: be more specific"); startDeadline(m.deadline_ms || 8000); }
        return;
      }
      const pts = m.points ? " (" + (m.points > 0 ? "+" : "") + m.points + ")" : "";
      el.ruling.textContent = who + ": " + said + " — " + (m.verdict === "accept" ? "correct" : "incorrect") + pts;
      el.ruling.className = "ruling " + m.verdict;
      if (m.player_id === me && m.verdict === "reject" && m.text) {
        const btn = document.createElement("button");
        btn.type = "button"; btn.className = "link"; btn.textContent = "I was right";
        btn.title = "Ask a researcher to review this ruling";
        const reportQid = m.qid;
        btn.addEventListener("click", () => { send({type: "report", qid: reportQid}); btn.disabled = true; btn.textContent = "Reported"; });
        el.ruling.append(" ", btn);
      }
      if (m.player_id === me) hideAnswerBox();
      holder = null;
      setStatus(m.verdict === "accept" ? "" : "Reading…");
      refreshButtons();
    },
    tossup_end(m) {
      if (m.qid !== qid) return;
      qid = null; holder = null; hideAnswerBox();
      el.text.textContent = m.text;
      el.answerline.hidden = false;
      el.answerline.replaceChildren();
      const label = document.createElement("b"); label.textContent = "Answer: ";
      const ans = document.createElement("span"); ans.textContent = m.answer.replace(/<[^>]+>/g, "");
      el.answerline.append(label, ans);
      setStatus({answered: "Answered.", timeout: "Time.", skipped: "Skipped."}[m.reason] + " Press Next (n).");
      refreshButtons();
    },
    scores(m) { mergePlayers(m.players); },
    presence(m) { mergePlayers(m.players); },
    chat(m) { addChat(m.name, m.text); },
    reported() { addChat("", "Thanks — a researcher will review that ruling.", "note"); },
    settings(m) { el.pace.value = m.settings.ms_per_word; el.paceOut.textContent = m.settings.ms_per_word + " ms/word"; renderBots(m.settings); },
    error(m) {
      if (m.code === "buzzer_taken") setStatus("Too slow — someone else buzzed first.");
      else addChat("", "⚠ " + m.message, "error");
    },
  };

  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const q = root.dataset.query ? "?" + root.dataset.query : "";
    ws = new WebSocket(`${proto}://${location.host}/ws/play/${slug}/${q}`);
    ws.onopen = () => { setStatus("Joining…"); send({type: "join", name}); };
    ws.onmessage = (ev) => {
      let m; try { m = JSON.parse(ev.data); } catch (e) { return; }
      (handlers[m.type] || (() => {}))(m);
    };
    ws.onclose = (ev) => {
      el.buzz.disabled = true;
      if (ev.code === 4029) { setStatus("Too many open connections from this browser or network; close other tabs and reload."); return; }
      setStatus(ev.code === 4008 ? "Disconnected for sending too fast; reconnecting…" : "Disconnected, reconnecting…");
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 300 * 2 ** retry);
    };
  }

  function buzz() { if (canBuzz()) send({type: "buzz", qid}); }

  el.buzz.addEventListener("click", buzz);
  // With a tossup running, Next names it: that skips it, and two players pressing Next at once skip only one.
  const next = () => send(qid ? {type: "next", qid} : {type: "next"});
  el.next.addEventListener("click", next);
  el.form.addEventListener("submit", (e) => { e.preventDefault(); send({type: "answer", qid, text: el.input.value}); });
  el.chatForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (el.chatInput.value.trim()) send({type: "chat", text: el.chatInput.value});
    el.chatInput.value = "";
  });
  el.pace.addEventListener("input", () => { el.paceOut.textContent = el.pace.value + " ms/word"; });
  $("bot-add").addEventListener("click", () => { const n = $("bot-pick").value; if (n) send({type: "settings", bots: {add: n}}); });
  el.pace.addEventListener("change", () => send({type: "settings", ms_per_word: Number(el.pace.value)}));
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA"].includes(document.activeElement.tagName);
    if (typing) return;
    if (e.code === "Space") { e.preventDefault(); buzz(); }
    else if (e.key === "n") { next(); }
  });

  if (name) connect();
  else {
    const dlg = $("name-dialog");
    $("name-form").addEventListener("submit", () => {
      name = $("name-input").value.trim().slice(0, 40) || "guest";
      localStorage.setItem("thinkalike-name", name);
      connect();
    });
    dlg.showModal();
  }
})();
