// The live room page: header, controls, timeline, people and airtime. REST for the
// discussion's details and Start; Socket.IO for everything that happens (see live.js).
(function () {
  "use strict";
  const { request, el, toast, pageData, roleBadge, STATUS_LABELS } = window.Convene;
  const R = window.ConveneRender;

  const page = pageData();
  const id = page.discussionId;
  const $ = (sel) => document.querySelector(sel);

  const state = {
    status: "draft", round: 0, maxRounds: 5, lastStatus: null,
    seats: new Map(), // seat id -> {name, role}
    airtime: new Map(), // speaker key -> {name, role, turns, tokens}
    rehearsal: false, refused: false,
  };

  const ALLOWED = {
    draft: ["start"], active: ["pause", "stop", "conclude"], paused: ["resume", "stop", "conclude"],
    concluded: [], stopped: [], failed: [],
  };

  function setStatus(status, round, maxRounds) {
    if (status) state.status = status;
    if (typeof round === "number") state.round = round;
    if (typeof maxRounds === "number") state.maxRounds = maxRounds;
    const badge = $("#status-badge");
    badge.className = `badge status status-${state.status}`;
    badge.dataset.status = state.status;
    badge.textContent = STATUS_LABELS[state.status] || state.status;
    $("#room").dataset.status = state.status;
    $("#round-indicator").textContent = `Round ${state.round} of ${state.maxRounds}`;
    updateControls();
  }

  function updateControls() {
    const allowed = state.refused ? [] : ALLOWED[state.status] || [];
    for (const button of document.querySelectorAll("[data-action]")) {
      button.disabled = !allowed.includes(button.dataset.action) || button.dataset.busy === "1";
    }
  }

  function showError(message) {
    const box = $("#room-error");
    box.textContent = message;
    box.hidden = !message;
  }

  function setConnection(s, detail) {
    const node = $("#connection");
    node.dataset.state = s;
    const labels = { online: "Live", offline: "Offline: reconnecting…", reconnecting: "Reconnecting…", connecting: "Connecting…", error: "Connection problem" };
    node.querySelector(".label").textContent = labels[s] || s;
    node.title = detail ? String(detail) : "";
  }

  function rememberSeat(seatId, name, role) {
    if (seatId == null) return;
    const known = state.seats.get(seatId) || {};
    state.seats.set(seatId, { name: name || known.name, role: role || known.role });
  }

  function nameOf(seatId) {
    const seat = state.seats.get(seatId);
    return seat && seat.name ? seat.name : `#${seatId}`;
  }

  function markRehearsal(turn) {
    if (turn && turn.rehearsal && !state.rehearsal) {
      state.rehearsal = true;
      $("#rehearsal-label").hidden = false;
    }
  }

  function append(node) {
    if (!node) return;
    $("#timeline").append(node);
    $("#timeline-empty").hidden = true;
  }

  function renderAirtime() {
    const box = $("#airtime");
    const rows = [...state.airtime.values()];
    if (!rows.length) return;
    const maxTurns = Math.max(...rows.map((r) => r.turns), 1);
    const maxTokens = Math.max(...rows.map((r) => r.tokens), 1);
    const meter = (cls, value, max, label) => el("div", { class: "meter" },
      el("span", { class: "track" }, el("span", { class: `bar ${cls}`, style: `--w:${(100 * value) / max}%` })),
      el("span", { class: "num" }, label));
    box.replaceChildren(
      el("p", { class: "legend", "aria-hidden": "true" }, el("span", { class: "l-turns" }, "turns"), el("span", { class: "l-tokens" }, "tokens")),
      el("ul", { class: "airtime-list", "aria-label": "Turns and tokens per speaker" }, rows.map((r) => el("li", { "data-speaker": r.name, "data-turns": r.turns, "data-tokens": r.tokens },
        el("div", { class: "who" }, el("span", { class: `swatch role-${r.role}`, "aria-hidden": "true" }), r.name),
        meter("turns", r.turns, maxTurns, `${r.turns} turn${r.turns === 1 ? "" : "s"}`),
        meter("tokens", r.tokens, maxTokens, `${r.tokens.toLocaleString()} tokens`)))));
  }

  function countAirtime(turn) {
    const speaker = turn.speaker || {};
    const key = speaker.id != null ? `s${speaker.id}` : speaker.name;
    const row = state.airtime.get(key) || { name: speaker.name || "Unknown", role: speaker.role || "participant", turns: 0, tokens: 0 };
    row.turns += 1;
    row.tokens += Number(turn.tokens) || 0;
    state.airtime.set(key, row);
    renderAirtime();
  }

  function showConclusion(text) {
    if (!text) return;
    $("#conclusion-text").replaceChildren(R.markdownNode(text));
    $("#conclusion").hidden = false;
  }

  // One event, applied exactly once and in seq order by live.js.
  function onEvent(event, replayed) {
    switch (event.type) {
      case "discussion:turn": {
        const turn = event.turn || {};
        const sp = turn.speaker || {};
        rememberSeat(sp.id, sp.name, sp.role);
        markRehearsal(turn);
        append(R.participantCard(event));
        countAirtime(turn);
        break;
      }
      case "discussion:moderator": {
        markRehearsal(event.turn);
        append(R.moderatorCard(event, nameOf));
        break;
      }
      case "discussion:concluded": {
        markRehearsal(event.turn);
        append(R.synthesisCard(event));
        showConclusion(event.conclusion);
        setStatus(event.status);
        break;
      }
      case "discussion:status": {
        if (state.lastStatus !== null && state.lastStatus !== event.status) append(R.statusLine(event));
        state.lastStatus = event.status;
        setStatus(event.status, event.round, event.maxRounds);
        if (!replayed) refreshUsageSoon();
        break;
      }
      default:
        break;
    }
  }

  function showUsage(usage) {
    if (!usage) return;
    const tokens = usage.totalTokens || 0;
    const calls = usage.calls != null ? `${usage.calls} model call${usage.calls === 1 ? "" : "s"} · ` : "";
    $("#usage").textContent = `${calls}${tokens.toLocaleString()} tokens in total · $${Number(usage.costUsd || 0).toFixed(4)}`;
  }

  // The room's usage (all calls, facilitator included) comes from REST; refreshed after changes.
  let usageTimer = null;
  function refreshUsageSoon() {
    clearTimeout(usageTimer);
    usageTimer = setTimeout(async () => {
      try {
        const { data } = await request("GET", `discussions/${id}`);
        showUsage(data.usage);
      } catch (err) { /* the next change tries again */ }
    }, 1500);
  }

  async function loadDetails() {
    try {
      const { data } = await request("GET", `discussions/${id}`);
      $("#room-name").textContent = data.name || `Discussion #${id}`;
      document.title = `${data.name || "Discussion"} · Convene`;
      $("#room-topic").textContent = data.topic && data.topic !== data.name ? data.topic : "";
      $("#room-format").textContent = data.format ? data.format[0].toUpperCase() + data.format.slice(1) : "Discussion";
      setStatus(data.status, data.round, data.maxRounds);
      showConclusion(data.conclusion);
      const people = $("#people");
      people.replaceChildren();
      const mod = data.moderator || data.facilitator;
      if (mod) {
        people.append(el("li", { class: "person" }, R.gavelIcon(), el("span", { class: "name" }, mod.name || `#${mod.id}`), roleBadge("facilitator")));
      }
      for (const p of data.participants || []) {
        const name = p.name || (p.agent && p.agent.name) || `#${p.agentId}`;
        const seatId = p.seatId ?? p.id;
        rememberSeat(seatId, name, p.role);
        people.append(el("li", { class: "person", "data-role": p.role }, el("span", { class: `swatch role-${p.role}`, "aria-hidden": "true" }), el("span", { class: "name" }, name), roleBadge(p.role)));
      }
      showUsage(data.usage);
    } catch (err) {
      if (err.status === 403 || err.status === 404) refuse("Discussion not found, or you may not view it.");
      else showError(`Could not load the discussion: ${err.message}`);
    }
  }

  function refuse(message) {
    state.refused = true;
    showError(message);
    updateControls();
    if (live && live.socket) live.socket.disconnect();
    setConnection("error", message);
  }

  async function act(action, button) {
    button.dataset.busy = "1";
    updateControls();
    showError("");
    try {
      let ack;
      if (action === "start" || !live.socket || !live.socket.connected) {
        // Start is a REST action in the contract; the others fall back to REST when offline.
        const { data } = await request("POST", `discussions/${id}/${action}`);
        ack = { ok: true, status: data && data.status };
      } else {
        ack = await live.control(action);
      }
      if (!ack.ok) {
        showError(ack.error || `Could not ${action} the discussion.`);
      } else {
        toast({ start: "Started", pause: "Paused", resume: "Resumed", stop: "Stopped", conclude: "Concluding…" }[action] || "Done");
        if (ack.status && ack.status !== state.status && action !== "conclude") setStatus(ack.status);
      }
    } catch (err) {
      showError(err.message || `Could not ${action} the discussion.`);
    } finally {
      delete button.dataset.busy;
      updateControls();
    }
  }

  for (const button of document.querySelectorAll("[data-action]")) {
    button.addEventListener("click", () => act(button.dataset.action, button));
  }

  const live = new window.ConveneLive.LiveDiscussion(id, {
    onEvent,
    onConnection: setConnection,
    onJoined: (ack) => { if (!state.refused) setStatus(ack.status, ack.round, ack.maxRounds); },
    onRefused: (ack) => refuse(ack.error || "You may not view this discussion."),
  });
  window.convene = { live, state }; // for debugging and the browser tests

  setStatus("draft", 0, 5);
  loadDetails().then(() => {
    if (state.refused) return;
    if (typeof window.io !== "function") {
      // static/vendor/ is filled by `npm --prefix frontend ci` (see frontend/package.json).
      showError("The live connection is unavailable: the Socket.IO client bundle is missing on the server.");
      setConnection("error");
      return;
    }
    live.connect();
  });
})();
