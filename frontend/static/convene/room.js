// The live room page: header, controls, timeline, people and airtime. REST for the
// discussion's details and Start; Socket.IO for everything that happens (see live.js).
(function () {
  "use strict";
  const { request, el, toast, pageData, roleBadge, counted, errorText, budgetLimits, agentLabels, STATUS_LABELS } = window.Convene;
  const R = window.ConveneRender;
  const { EVENTS, OfflinePoller, connectionLabel } = window.ConveneLive;

  const page = pageData();
  const id = page.discussionId;
  const $ = (sel) => document.querySelector(sel);

  const POLL_MS = 3000;
  const OFFLINE_GRACE_MS = 3000;

  const state = {
    status: "draft", round: 0, maxRounds: 5, lastStatus: null, conclusion: "",
    usage: { calls: 0, tokens: 0, costUsd: 0 }, seen: { calls: 0, tokens: 0 }, connection: "connecting", connectionDetail: "",
    seats: new Map(), // seat id -> {name, role}
    labels: new Map(), // seat id -> the agent's name, with its @alias and whose it is where another agent has that name
    moderatorLabel: null, // the facilitator's, the same way
    airtime: new Map(), // speaker key -> {name, role, turns, tokens}
    rehearsal: false, refused: false,
    mayComment: Boolean(page.canParticipate), // false once the owner makes this person a viewer
    opened: false, // the facilitator's first decision is in
    pending: null, // {seats, synthesize}: what the last decision asked for, until those seats have answered
  };

  // Verbs allowed from each status, from the server's lifecycle table.
  const ALLOWED = page.controls || {};

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
    showNow();
    const stopped = $("#stopped-actions");
    if (stopped) stopped.hidden = state.status !== "stopped" || state.refused;
    updateControls();
  }

  const OPEN_STATES = ["active", "paused"]; // a person may comment, and the owner move the phase on

  function updateControls() {
    const allowed = state.refused ? [] : ALLOWED[state.status] || [];
    for (const button of document.querySelectorAll("[data-action]")) {
      button.disabled = !allowed.includes(button.dataset.action) || button.dataset.busy === "1";
    }
    const open = !state.refused && OPEN_STATES.includes(state.status);
    const advance = document.getElementById("btn-advance");
    if (advance) advance.disabled = !open || advance.dataset.last === "1" || advance.dataset.busy === "1";
    showCommentForm(open && state.mayComment);
    const copy = document.getElementById("btn-copy-concluded");
    if (copy) copy.hidden = state.refused || state.status !== "concluded";
    const budget = document.getElementById("btn-budget");
    if (budget) {
      budget.hidden = state.refused || !SPENDING_STATES.includes(state.status);
      if (budget.hidden) closeBudget();
    }
  }

  // The room's budget: the line for everyone, the form for whoever controls the room (PATCH budgetTokens, budgetUsd).
  const SPENDING_STATES = ["draft", "active", "paused"];

  function showBudget(data) {
    state.budget = { tokens: data.budgetTokens ?? null, usd: data.budgetUsd ?? null };
    const limits = budgetLimits(data);
    if (!limits) { $("#budget-line").textContent = "No budget caps this discussion."; return; }
    const usage = data.usage || {};
    const shares = [data.budgetTokens ? (usage.totalTokens || 0) / data.budgetTokens : 0,
      data.budgetUsd ? Number(usage.costUsd || 0) / data.budgetUsd : 0];
    const used = Math.min(100, Math.round(Math.max(...shares) * 100));
    $("#budget-line").textContent = `Budget: ${limits} · ${used} % used`;
  }

  function openBudget() {
    $("#budget-tokens").value = state.budget ? state.budget.tokens ?? "" : "";
    $("#budget-usd").value = state.budget ? state.budget.usd ?? "" : "";
    budgetError("");
    $("#budget-form").hidden = false;
    $("#btn-budget").setAttribute("aria-expanded", "true");
    $("#budget-tokens").focus();
  }

  function closeBudget() {
    const form = document.getElementById("budget-form");
    if (!form) return;
    form.hidden = true;
    $("#btn-budget").setAttribute("aria-expanded", "false");
  }

  function budgetError(message) {
    const box = $("#budget-error");
    box.textContent = message;
    box.hidden = !message;
  }

  async function saveBudget(e) {
    e.preventDefault();
    // An emptied field clears that budget (null); a field that had none and stays empty is not sent.
    const body = {};
    for (const [field, key] of [["#budget-tokens", "budgetTokens"], ["#budget-usd", "budgetUsd"]]) {
      const had = state.budget && state.budget[key === "budgetTokens" ? "tokens" : "usd"] != null;
      if ($(field).value !== "") body[key] = Number($(field).value);
      else if (had) body[key] = null;
    }
    if (!Object.keys(body).length) { closeBudget(); return; }
    try {
      const { data } = await request("PATCH", `discussions/${id}`, body);
      showBudget(data);
      closeBudget();
      toast("The budget is saved");
    } catch (err) {
      budgetError(errorText(err, { budgetTokens: "Tokens", budgetUsd: "US dollars" }));
    }
  }

  function showError(message) {
    const box = $("#room-error");
    box.textContent = message;
    box.hidden = !message;
  }

  function setConnection(s, detail) {
    state.connection = s;
    state.connectionDetail = detail ? String(detail) : "";
    poller.connection(s); // redraws the label (showConnection)
  }

  function showConnection() {
    const node = $("#connection");
    node.dataset.state = poller.polling ? "polling" : state.connection;
    node.querySelector(".label").textContent = connectionLabel(state.connection, poller.polling, poller.lastUpdate);
    node.title = state.connectionDetail;
  }

  // --- the transcript over REST: first load, and polling while the socket is down ---------
  function eventFromTurn(t) {
    const base = { discussionId: id, seq: t.seq, ts: t.createdAt, turn: t };
    if (t.kind === "decision") return { ...base, type: EVENTS.MODERATOR, decision: t.data || {}, round: t.round };
    if (t.kind === "synthesis") return { ...base, type: EVENTS.CONCLUDED, conclusion: t.content, status: null };
    return { ...base, type: EVENTS.TURN };
  }

  async function fetchTurnsAfter(seq) {
    const events = [];
    for (let after = seq, page = 0; page < 20; page += 1) {
      const { data } = await request("GET", `discussions/${id}/turns?afterSeq=${after}&limit=500`);
      const rows = Array.isArray(data) ? data : (data && data.results) || [];
      events.push(...rows.map(eventFromTurn));
      if (rows.length < 500) break;
      after = rows[rows.length - 1].seq;
    }
    return events;
  }

  async function pollOnce() {
    live.applyFetched(await fetchTurnsAfter(live.lastSeq));
    const { data } = await request("GET", `discussions/${id}`);
    setStatus(data.status, data.round, data.maxRounds);
    if (data.conclusion && data.conclusion !== state.conclusion) showConclusion(data.conclusion);
    showUsage(data.usage);
    showBudget(data);
  }

  // While the socket is down the transcript and the room's state are read over REST (live.js OfflinePoller).
  const poller = new OfflinePoller(pollOnce, {
    intervalMs: POLL_MS, graceMs: OFFLINE_GRACE_MS, onChange: showConnection,
    onError: (err) => { if (err.status === 403 || err.status === 404) refuse("Discussion not found, or you may not view it."); },
  });

  function rememberSeat(seatId, name, role) {
    if (seatId == null) return;
    const known = state.seats.get(seatId) || {};
    state.seats.set(seatId, { name: name || known.name, role: role || known.role });
  }

  function nameOf(seatId) {
    if (state.labels.has(seatId)) return state.labels.get(seatId);
    const seat = state.seats.get(seatId);
    return seat && seat.name ? seat.name : `#${seatId}`;
  }

  // A speaker ({id: seat id, name, role}) as the page names it: two agents of one name are told apart.
  function speakerName(speaker) {
    const sp = speaker || {};
    if (state.labels.has(sp.id)) return state.labels.get(sp.id);
    if (sp.role === "facilitator" && state.moderatorLabel) return state.moderatorLabel;
    return sp.name || "Unknown";
  }

  // Agents of one name in this room, told apart as wherever an agent is chosen (api.js agentLabels):
  // "Architect (@architect-2, yours)", "Architect (@architect-2, tara's)". Each seat and the moderator say
  // whose their agent is (`owner`, `isBuiltin`), whoever owns the room.
  function labelSeats(data) {
    const mod = data.moderator || data.facilitator;
    const seated = (data.participants || []).filter((p) => p.agentId != null)
      .map((p) => ({ id: p.agentId, name: p.name, alias: p.alias || "", isBuiltin: !!p.isBuiltin, owner: p.owner, seatId: p.seatId ?? p.id }));
    const agents = [...(mod ? [{ id: mod.id, name: mod.name, alias: mod.alias || "", isBuiltin: !!mod.isBuiltin, owner: mod.owner }] : []), ...seated];
    const fold = (text) => String(text || "").trim().toLowerCase();
    const names = agents.map((a) => fold(a.name));
    state.labels.clear();
    state.moderatorLabel = null;
    if (new Set(names).size === names.length) return;
    const labels = agentLabels([...new Map(agents.map((a) => [a.id, a])).values()]);
    if (mod) state.moderatorLabel = labels[mod.id];
    for (const p of seated) state.labels.set(p.seatId, labels[p.id]);
  }

  function markRehearsal(turn) {
    if (turn && turn.rehearsal && !state.rehearsal) {
      state.rehearsal = true;
      $("#rehearsal-label").hidden = false;
    }
  }

  // Every line of the timeline keeps seq order, whichever arrived first: a phase line restored
  // from the votes history can land before the transcript it belongs in.
  function append(node) {
    if (!node) return;
    const timeline = $("#timeline");
    const seq = Number(node.dataset && node.dataset.seq);
    const last = timeline.lastElementChild;
    const later = Number.isFinite(seq) && last && Number(last.dataset.seq) > seq
      ? [...timeline.children].find((li) => Number(li.dataset.seq) > seq) : null;
    if (later) timeline.insertBefore(node, later);
    else timeline.append(node);
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
      el("ul", { class: "airtime-list", "aria-label": "Turns and tokens per speaker" }, rows.map((r) => el("li", { "data-speaker": r.name, "data-seat-id": r.seatId, "data-turns": r.turns, "data-tokens": r.tokens },
        el("div", { class: "who" }, el("span", { class: `swatch role-${r.role}`, "aria-hidden": "true" }), speakerName({ id: r.seatId, name: r.name, role: r.role })),
        meter("turns", r.turns, maxTurns, `${r.turns} turn${r.turns === 1 ? "" : "s"}`),
        meter("tokens", r.tokens, maxTokens, `${r.tokens.toLocaleString()} tokens`)))));
  }

  function countAirtime(turn) {
    if (turn.data && turn.data.pass) return; // a pass is not airtime
    const speaker = turn.speaker || {};
    const key = speaker.id != null ? `s${speaker.id}` : speaker.name;
    const row = state.airtime.get(key) || { name: speaker.name || "Unknown", seatId: speaker.id, role: speaker.role || "participant", turns: 0, tokens: 0 };
    row.turns += 1;
    row.tokens += Number(turn.tokens) || 0;
    state.airtime.set(key, row);
    renderAirtime();
  }

  function showConclusion(text) {
    if (!text) return;
    state.conclusion = text;
    $("#conclusion-text").replaceChildren(R.markdownNode(text));
    $("#conclusion").hidden = false;
  }

  // What is happening now, under the timeline: a model's answer can take a minute or two, and without this
  // a running room looks stuck. From the events alone: the last decision names who answers (several at once
  // when turns run in parallel), or that the conclusion is being written; once they have spoken, the
  // facilitator weighs it. A person's comment changes neither.
  function track(event) {
    if (event.type === EVENTS.MODERATOR) {
      const d = event.decision || {};
      const asked = Array.isArray(d.together) && d.together.length ? d.together : [d.nextParticipantId];
      state.opened = true;
      state.pending = { seats: asked.filter((seat) => seat != null), synthesize: d.decision === "synthesize" };
    } else if (event.type === EVENTS.TURN && state.pending && !state.pending.synthesize) {
      const speaker = (event.turn || {}).speaker || {};
      state.pending.seats = state.pending.seats.filter((seat) => seat !== speaker.id);
      if (!state.pending.seats.length) state.pending = null;
    }
    showNow();
  }

  function showNow() {
    const node = document.getElementById("now");
    if (!node) return;
    const p = state.pending;
    const names = p && !p.synthesize ? p.seats.map(nameOf) : [];
    const next = names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names[0];
    let text = "";
    if (state.status === "active") {
      if (!state.opened) text = "The facilitator is opening the discussion…";
      else if (p && p.synthesize) text = "The facilitator is writing the conclusion…";
      else if (next) text = `${next} ${names.length > 1 ? "are" : "is"} answering…`;
      else text = "The facilitator is weighing the last answer and choosing who speaks next…";
    } else if (state.status === "paused") {
      text = next ? `Paused: ${next} ${names.length > 1 ? "speak" : "speaks"} next when the discussion resumes.`
        : "Paused: nothing runs until the discussion resumes.";
    }
    node.textContent = text;
    node.hidden = !text;
  }

  // A person's turn whose chat message was edited says so in its header (a deleted one reads "(deleted by its author)").
  function markChanged(card, turn) {
    const data = (turn && turn.data) || {};
    if (!card || !(data.edited || data.deleted)) return card;
    card.dataset.changed = data.deleted ? "deleted" : "edited";
    const spacer = card.querySelector(".card-head .spacer");
    const badge = el("span", { class: "badge turn-changed muted small", title: data.deleted ? "" : `Edited ${data.edited.count === 1 ? "once" : `${data.edited.count} times`} in its chat` },
      data.deleted ? "deleted" : "edited");
    if (spacer) spacer.before(badge);
    return card;
  }

  // One event, applied exactly once and in seq order by live.js.
  function onEvent(event, replayed) {
    // Panels of their own (e.g. a facilitation run's outcome) listen for every applied event.
    document.dispatchEvent(new CustomEvent("convene:event", { detail: { event, replayed } }));
    poller.touched();
    if (event.type !== EVENTS.STATUS) {
      countUsage(event.turn);
      if (!replayed) refreshUsageSoon();
    }
    switch (event.type) {
      case EVENTS.TURN: {
        const turn = event.turn || {};
        const sp = turn.speaker || {};
        rememberSeat(sp.id, sp.name, sp.role);
        markRehearsal(turn);
        append(markChanged(R.participantCard(event, speakerName), turn));
        track(event);
        countAirtime(turn);
        if (!replayed || (turn.markers || []).some((m) => m.type === "vote")) refreshVotesSoon();
        break;
      }
      case EVENTS.TURN_UPDATED: {
        // A chat message edited, deleted or restored by its author: its card shows the turn as it reads now.
        const turn = event.turn || {};
        const card = $("#timeline").querySelector(`[data-kind="turn"][data-turn-id="${Number(turn.id)}"]`);
        if (card) card.replaceWith(markChanged(R.participantCard({ ...event, seq: turn.seq, ts: turn.createdAt }, speakerName), turn));
        if ((turn.markers || []).some((m) => m.type === "vote") || event.change !== "edited") refreshVotesSoon();
        break;
      }
      case EVENTS.MODERATOR: {
        markRehearsal(event.turn);
        append(R.moderatorCard(event, nameOf, speakerName));
        track(event);
        break;
      }
      case EVENTS.CONCLUDED: {
        markRehearsal(event.turn);
        append(R.synthesisCard(event, speakerName));
        // A replayed synthesis does not undo a conclusion edited since (the details have the current one).
        if (!replayed || !state.conclusion) showConclusion(event.conclusion);
        setStatus(event.status);
        break;
      }
      case EVENTS.STATUS: {
        if (state.lastStatus !== null && state.lastStatus !== event.status) append(R.statusLine(event));
        state.lastStatus = event.status;
        setStatus(event.status, event.round, event.maxRounds);
        if (!replayed) refreshUsageSoon();
        break;
      }
      case EVENTS.PHASE: {
        placePhaseLine(event);
        refreshVotesSoon();
        break;
      }
      default:
        break;
    }
  }

  // --- votes: the tally as a small chart and the consensus state (GET .../votes, refreshed on
  // every turn and phase event) ------------------------------------------------------------
  const VOTE_ROWS = [["ready", "Ready"], ["changes", "Changes"], ["reject", "Reject"]];
  // "1 of 3 voters has voted", "2 of 3 voters have voted" (the sealed ballot's progress).
  const votedLine = (doc) => `${doc.voted} of ${counted(doc.eligible, "voter")} ${doc.voted === 1 || doc.eligible === 1 ? "has" : "have"} voted`;

  function phaseTitle(key) {
    const phase = (state.phases || []).find((p) => p.key === key);
    return phase ? phase.title : key;
  }

  // A phase change is an event, not a turn: after a reload the transcript (REST) lacks it, so the
  // votes document's history puts each line back where it happened (before the first later seq).
  function placePhaseLine(event) {
    const timeline = $("#timeline");
    if (timeline.querySelector(`[data-kind="phase"][data-seq="${Number(event.seq)}"]`)) return;
    append(R.phaseLine(event, phaseTitle(event.phase)));
  }

  function showVotes(doc) {
    state.phases = doc.phases || [];
    state.phase = doc.phase;
    (doc.history || []).forEach((change) => placePhaseLine({ seq: change.seq, phase: change.phase }));
    const card = $("#deliberation");
    const anyVotes = (doc.votes || []).length > 0;
    card.hidden = !doc.template && !anyVotes && card.hidden;
    const index = state.phases.findIndex((p) => p.key === doc.phase);
    const phase = state.phases[index];
    const mode = phase ? { none: "no votes asked", open: "open vote", ballot: "independent ballot" }[phase.voting] : "";
    $("#phase-name").textContent = phase ? `Phase ${index + 1} of ${state.phases.length}: ${phase.title} (${mode})` : "";
    $("#phase-name").dataset.phase = doc.phase || "";
    const tally = $("#tally");
    const total = Math.max(doc.eligible || 0, (doc.votes || []).length, 1);
    tally.classList.toggle("sealed", Boolean(doc.sealed));
    tally.dataset.sealed = doc.sealed ? "true" : "false";
    tally.replaceChildren(...VOTE_ROWS.map(([key, label]) => {
      const count = doc.sealed ? null : Number((doc.tally || {})[key] || 0);
      return el("div", { class: "row", "data-value": key, "data-count": count === null ? "" : count },
        el("span", { class: "label" }, label),
        el("span", { class: "track" }, el("span", { class: `bar ${key}`, style: `--w:${count === null ? 0 : (100 * count) / total}%` })),
        el("span", { class: "num" }, count === null ? "?" : String(count)));
    }));
    tally.setAttribute("aria-label", doc.sealed
      ? `Ballot sealed: ${votedLine(doc)}`
      : VOTE_ROWS.map(([key, label]) => `${label} ${(doc.tally || {})[key] || 0}`).join(", "));
    const consensus = $("#consensus");
    const reached = Boolean(doc.consensus && doc.consensus.reached);
    consensus.dataset.reached = reached ? "true" : "false";
    consensus.textContent = doc.sealed
      ? `Ballot sealed: ${votedLine(doc)}.`
      : `${reached ? "Consensus reached" : "No consensus yet"}: ${(doc.consensus && doc.consensus.reason) || ""}`;
    const advance = $("#btn-advance");
    if (advance) {
      const last = index < 0 || index >= state.phases.length - 1;
      advance.hidden = !doc.template;
      advance.dataset.last = last ? "1" : "";
      updateControls();
    }
  }

  let votesTimer = null;
  function refreshVotesSoon(delay) {
    clearTimeout(votesTimer);
    votesTimer = setTimeout(async () => {
      try {
        const { data } = await request("GET", `discussions/${id}/votes`);
        showVotes(data);
      } catch (err) { /* the next turn tries again */ }
    }, delay === undefined ? 250 : delay);
  }

  async function advancePhase() {
    const button = $("#btn-advance");
    button.dataset.busy = "1";
    updateControls();
    showError("");
    try {
      const { data } = await request("POST", `discussions/${id}/advance`);
      toast(`Phase: ${phaseTitle(data.phase)}`);
    } catch (err) {
      showError(err.message || "Could not move to the next phase.");
    } finally {
      delete button.dataset.busy;
      refreshVotesSoon(0);
    }
  }
  if ($("#btn-advance")) $("#btn-advance").addEventListener("click", advancePhase);

  // --- comments: a person speaks in a running or paused discussion ---------------------------
  // Comments close when the discussion ends, or when this person may now only read it. What they were typing
  // does not vanish with the form: it stays in the box, read-only to copy, with why it cannot be posted.
  const CLOSED_BECAUSE = { concluded: "the discussion has concluded", stopped: "the discussion was stopped",
                           failed: "the discussion failed", draft: "the discussion has not started" };

  function showCommentForm(open) {
    const form = document.getElementById("comment-form");
    if (!form) return;
    const box = $("#comment-text");
    const unsent = box.value.trim() !== "";
    form.hidden = !open && !unsent;
    box.readOnly = !open;
    const send = $("#comment-send");
    send.disabled = !open || send.dataset.busy === "1";
    const why = state.refused ? "you no longer have access to this discussion"
      : !state.mayComment ? "you may now only read this discussion"
        : CLOSED_BECAUSE[state.status] || "comments are closed";
    const closed = $("#comment-closed");
    closed.textContent = open ? "" : `Your comment was not posted: ${why}. The text stays here for you to copy.`;
    closed.hidden = open;
  }

  function commentError(message) {
    const node = $("#comment-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  function commentNote(message) {
    const node = $("#comment-note");
    if (!node) return;
    node.textContent = message || "";
    node.hidden = !message;
  }

  // A vote counts only on a line of its own that starts with VOTE: (the markers' rule). A comment that says
  // "VOTE:" and got no vote counted (mid-line, or no READY, CHANGES or REJECT after it) is told so, and how.
  const SAYS_VOTE = /\bVOTE\s*:/i;
  function voteNotCounted(content, turn) {
    const counted = ((turn && turn.markers) || []).some((m) => m.type === "vote" && m.value);
    return !counted && SAYS_VOTE.test(content);
  }

  if ($("#comment-form")) {
    $("#comment-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const box = $("#comment-text");
      const content = box.value.trim();
      if (!content) { commentError("Write something first."); box.focus(); return; }
      const send = $("#comment-send");
      send.dataset.busy = "1";
      send.disabled = true;
      commentError("");
      commentNote("");
      try {
        const { data } = await request("POST", `discussions/${id}/comments`, { content });
        box.value = "";
        if (voteNotCounted(content, data)) {
          commentNote("Your comment is posted, but its vote was not counted: a vote is a line of its own that starts "
            + "with VOTE:, such as VOTE: READY (or VOTE: CHANGES, VOTE: REJECT).");
        }
      } catch (err) {
        commentError(err.message || "Could not post the comment.");
      } finally {
        delete send.dataset.busy;
        updateControls();
      }
    });
  }

  // Quality of the discussion (from REST): airtime balance, open items, corrections and fallbacks.
  function showAnalytics(a) {
    if (!a) return;
    let node = document.getElementById("analytics");
    if (!node) {
      node = el("p", { id: "analytics", class: "muted small" });
      $("#usage").after(node);
    }
    const count = (o) => Object.values(o || {}).reduce((x, y) => x + y, 0);
    node.textContent = `Airtime balance (Gini) ${Number(a.gini || 0).toFixed(2)} · open: ${counted((a.openQuestions || []).length, "question")}, ` +
      `${counted((a.openConcerns || []).length, "concern")} · devil's advocate objections ${(a.devilsAdvocateObjections || []).length} · ` +
      `corrections ${count(a.corrections)}, fallbacks ${count(a.fallbacks)}`;
  }

  // Totals: the server's figures, never behind what the page has already seen (the bars).
  function showUsage(usage) {
    if (usage) state.usage = { calls: usage.calls || 0, tokens: usage.totalTokens || 0, costUsd: Number(usage.costUsd || 0) };
    const calls = Math.max(state.usage.calls, state.seen.calls);
    const tokens = Math.max(state.usage.tokens, state.seen.tokens);
    const node = $("#usage");
    node.dataset.calls = calls;
    node.dataset.tokens = tokens;
    node.textContent = `${calls} model call${calls === 1 ? "" : "s"} · ${tokens.toLocaleString()} tokens in total · $${state.usage.costUsd.toFixed(4)}`;
  }

  function countUsage(turn) {
    if (!turn) return;
    const tokens = Number(turn.tokens) || 0;
    if (tokens > 0) state.seen.calls += 1;
    state.seen.tokens += tokens;
    showUsage(null);
  }

  // The room's usage (all calls, facilitator included) comes from REST; refreshed after changes.
  let usageTimer = null;
  function refreshUsageSoon() {
    clearTimeout(usageTimer);
    usageTimer = setTimeout(async () => {
      try {
        const { data } = await request("GET", `discussions/${id}`);
        showUsage(data.usage);
        showBudget(data);
        showAnalytics(data.analytics);
      } catch (err) { /* the next change tries again */ }
    }, 800);
  }

  async function loadDetails() {
    try {
      const { data } = await request("GET", `discussions/${id}`);
      state.owner = data.owner;
      $("#room-name").textContent = data.name || `Discussion #${id}`;
      document.title = `${data.name || "Discussion"} · Convene`;
      // The topic is Markdown (as the facilitator and the agents read it): rendered as a turn is.
      const topic = data.topic && data.topic !== data.name ? data.topic : "";
      $("#room-topic").replaceChildren(...(topic ? [window.ConveneMarkdown.markdownNode(topic)] : []));
      $("#room-format").textContent = data.kind === "facilitation" ? "Facilitation run"
        : data.format ? data.format[0].toUpperCase() + data.format.slice(1) : "Discussion";
      setStatus(data.status, data.round, data.maxRounds);
      showConclusion(data.conclusion);
      labelSeats(data);
      const people = $("#people");
      people.replaceChildren();
      const mod = data.moderator || data.facilitator;
      if (mod) {
        people.append(el("li", { class: "person" }, R.gavelIcon(), el("span", { class: "name" }, state.moderatorLabel || mod.name || `#${mod.id}`), roleBadge("facilitator")));
      }
      for (const p of data.participants || []) {
        const name = p.name || (p.agent && p.agent.name) || `#${p.agentId}`;
        const seatId = p.seatId ?? p.id;
        rememberSeat(seatId, name, p.role);
        people.append(el("li", { class: "person", "data-role": p.role, "data-seat-id": seatId }, el("span", { class: `swatch role-${p.role}`, "aria-hidden": "true" }),
          el("span", { class: "name" }, state.labels.get(seatId) || name), roleBadge(p.role)));
      }
      showUsage(data.usage);
      showBudget(data);
      showAnalytics(data.analytics);
      if (data.template) $("#deliberation").hidden = false;
      refreshVotesSoon(0);
      document.dispatchEvent(new CustomEvent("convene:details", { detail: data }));  // run.js shows a run's brief
    } catch (err) {
      if (err.status === 403 || err.status === 404) refuse("Discussion not found, or you may not view it.");
      else showError(`Could not load the discussion: ${err.message}`);
    }
  }

  function refuse(message) {
    state.refused = true;
    poller.stop();
    showError(message);
    updateControls();
    if (live && live.socket) live.socket.disconnect();
    setConnection("error", message);
  }

  function confirmStop() {
    const dialog = $("#stop-dialog");
    if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(window.confirm("Stop this discussion for good?"));
    return new Promise((resolve) => {
      dialog.returnValue = "";
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "stop"), { once: true });
      dialog.showModal();
    });
  }

  async function act(action, button) {
    if (action === "stop" && !(await confirmStop())) return;
    button.dataset.busy = "1";
    updateControls();
    showError("");
    try {
      let ack;
      if (action === "start" || state.status === "stopped" || !live.socket || !live.socket.connected) {
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

  async function copyAsDraft() {
    try {
      const { data } = await request("POST", `discussions/${id}/copy`);
      toast(`Copied as "${data.name}"`);
      window.location.assign(`/discussions/${data.id}/`);
    } catch (err) {
      showError(`Could not copy: ${err.message}`);
    }
  }
  if ($("#btn-copy")) $("#btn-copy").addEventListener("click", copyAsDraft);
  if ($("#btn-copy-concluded")) $("#btn-copy-concluded").addEventListener("click", copyAsDraft);

  // --- sharing (owner and staff): sharing.js --------------------------------------------------
  const sharing = window.ConveneSharing ? window.ConveneSharing.mount({ discussionId: id, noun: "discussion", owner: () => state.owner })
    : { load: async () => {} };

  if ($("#budget-form")) {
    $("#btn-budget").addEventListener("click", () => ($("#budget-form").hidden ? openBudget() : closeBudget()));
    $("#budget-cancel").addEventListener("click", closeBudget);
    $("#budget-form").addEventListener("submit", saveBudget);
  }

  const live = new window.ConveneLive.LiveDiscussion(id, {
    onEvent,
    onConnection: setConnection,
    onJoined: (ack) => { if (!state.refused) setStatus(ack.status, ack.round, ack.maxRounds); },
    onRefused: (ack) => refuse(ack.error || "You may not view this discussion."),
    // A member's access changed. A viewer's page has no comment box, so it is drawn again for one who may now
    // speak; one who may now only read keeps the page, and what they were typing (see showCommentForm).
    onAccess: (access) => {
      const speaks = access === "participant";
      if (speaks === state.mayComment) return;
      toast(speaks ? "You may now speak in this discussion" : "You may now only read this discussion");
      if (speaks && !$("#comment-form")) { setTimeout(() => window.location.reload(), 1200); return; }
      state.mayComment = speaks;
      updateControls();
    },
  });
  window.convene = { live, state }; // for debugging and the browser tests

  setStatus("draft", 0, 5);
  loadDetails().then(async () => {
    if (state.refused) return;
    sharing.load();
    // The transcript comes over REST first: it shows even when live updates cannot connect.
    try {
      live.applyFetched(await fetchTurnsAfter(0));
      poller.touched();
    } catch (err) { /* the socket's join replays it */ }
    if (typeof window.io !== "function") {
      // static/vendor/ is filled by `npm --prefix frontend ci` (see frontend/package.json).
      showError("The live connection is unavailable: the Socket.IO client bundle is missing on the server.");
      setConnection("error");
      return;
    }
    live.connect();
    poller.connection(state.connection); // not online yet: polling starts if it stays so
  });
})();
