// The manager's desk of a workspace: observations, rounds, narratives, tasks, personas, search and
// the invocation log, kept live by the room's events (each event refreshes what it names).
(function () {
  "use strict";
  const { request, el, toast, pageData, statusBadge, duration, counted, budgetLimits, budgetText, errorText, agentLabels } = window.Convene;
  const page = pageData();
  const id = page.discussionId;
  const base = `discussions/${id}`;
  const $ = (sel) => document.querySelector(sel);
  const TYPES = ["question", "blocker", "solution", "agreement", "disagreement", "observation", "decision", "analysis", "concern", "clarification"];
  const CLOSED = ["completed", "archived"];
  // Roles no workspace agent works in (the server refuses them: facilitation.workspace.rules.NOT_WORK_ROLES).
  const NOT_WORK_ROLES = ["facilitator", "observer"];
  const state = { room: null, observations: [], narratives: [], tasks: [], personas: [], editing: null, taskDraft: null, roles: [], replyTo: null,
    labels: {}, arrived: null, restored: null, conflict: null, saving: false, taskConflict: null, taskBusy: null };

  function fail(err) {
    const box = $("#room-error");
    box.textContent = err.message || String(err);
    box.hidden = false;
  }

  // The desk's words for the fields the API names in its error details.
  const FIELD_LABELS = { title: "Title", description: "Description", content: "Text", keyDecisions: "Key decisions", nextSteps: "Next steps",
    blockers: "Blockers", type: "Type", respondingToId: "Reply to", priority: "Priority", assigneeId: "Assign to", personaId: "Persona",
    roleId: "Role", username: "Username", access: "Access", "turnPolicy.maxEvents": "Observations per round",
    "turnPolicy.maxSeconds": "Seconds per round", budgetTokens: "Token budget", budgetUsd: "Budget in USD" };
  const LIST_ITEMS = 50;  // a narrative's key decisions and next steps (facilitation.workspace.inputs.LIST_ITEMS)
  // The most characters a narrative's text may have, as the server checks it (page data: facilitation.workspace.inputs.NARRATIVE).
  const NARRATIVE_LIMIT = page.narrativeLimit;
  // The most characters a task's description may have (page data: facilitation.workspace.inputs.COMMENT).
  const TASK_DESCRIPTION_LIMIT = page.taskDescriptionLimit;
  // The largest budget in USD the server takes (page data: facilitation.actions.inputs.MAX_USD).
  const BUDGET_USD_LIMIT = page.budgetUsdLimit;
  // The largest token budget the server takes (page data: facilitation.actions.inputs.MAX_BIG), as far as the browser
  // keeps a whole number exactly (a larger one would not be sent as typed).
  const BUDGET_TOKENS_LIMIT = page.budgetTokensLimit == null ? null : Math.min(page.budgetTokensLimit, Number.MAX_SAFE_INTEGER);
  const NEAR_LIMIT = 0.9;  // from this share of the limit on, an editor counts the characters

  // An API error as the manager reads it: its message, then what is wrong with each field, a line each, in the desk's words.
  function failed(err) { toast(errorText(err, FIELD_LABELS, "\n"), "error"); }

  // An API error refusing what a form sent, said in the form's own line under it (where the manager is looking),
  // in the desk's words; what was typed stays in the form.
  function refused(selector, err, words = FIELD_LABELS) {
    if ($(selector)) formMessage(selector, errorText(err, words, "\n"));  // a line each (the box keeps line breaks)
    else failed(err);
  }

  // The pacing form asks for minutes; the API counts a round's length in seconds.
  const PACING_WORDS = (field, text) => (field === "turnPolicy.maxSeconds"
    ? "Minutes per round: a round lasts from 5 seconds (about 0.09 minutes) to 24 hours (1440 minutes)."
    : FIELD_LABELS[field] ? `${FIELD_LABELS[field]}: ${text}` : text);

  // A form's own message under it (what the manager must change before anything is sent); "" clears it.
  function formMessage(selector, message) {
    const box = $(selector);
    if (!box) return;
    box.textContent = message || "";
    box.hidden = !message;
  }

  // Text of spaces only is no text: the form says so and sends nothing.
  function blank(value) { return !String(value || "").trim(); }

  // Text written by the offline rehearsal model says so wherever it appears.
  function rehearsalTag(item) {
    return item.rehearsal ? el("span", { class: "badge rehearsal small", title: "Written by the offline rehearsal model" }, "rehearsal") : null;
  }

  // The room's agents (its seats' and its narrator's) by names people can tell apart: agent id -> label.
  // A name no other agent here has is the label; a shared one carries the @alias and whose the agent is
  // ("Architect (@architect-2, yours)", "Architect (@architect, built-in)"), as the wizard names them: each
  // participant and the moderator say it (`alias`, `isBuiltin`, `owner`).
  function labelAgents() {
    const r = state.room || {};
    const agents = new Map();
    const add = (a) => {
      if (a.id == null || agents.has(a.id)) return;
      agents.set(a.id, { id: a.id, name: a.name, alias: a.alias || "", isBuiltin: !!a.isBuiltin, owner: a.owner });
    };
    for (const s of r.participants || []) add({ ...s, id: s.agentId });
    if (r.moderator) add(r.moderator);
    state.labels = agentLabels([...agents.values()]);
  }

  // A seat as the desk names it wherever it is chosen or shown: its agent's label (a person's seat: the name).
  function seatLabel(seat) {
    return (seat.agentId != null && state.labels[seat.agentId]) || seat.name;
  }

  function seatName(seatId) {
    const seat = (state.room && state.room.participants || []).find((p) => p.seatId === seatId);
    return seat ? seatLabel(seat) : "";
  }

  // Who wrote an observation: its seat as the desk names it, or the name it was written under.
  function authorName(o) {
    return (o.seatId != null && seatName(o.seatId)) || o.author.name;
  }

  // An agent by its name: the room's agents and its narrator are known to the desk (an id only for one that is not).
  function agentName(agentId) {
    const r = state.room || {};
    if (state.labels[agentId]) return state.labels[agentId];
    const seat = (r.participants || []).find((p) => p.agentId === agentId);
    if (seat) return seat.name;
    if (r.moderator && r.moderator.id === agentId) return r.moderator.name;
    return `agent ${agentId}`;
  }

  async function loadRoom() {
    state.room = (await request("GET", base)).data;
    const r = state.room;
    labelAgents();
    $("#room-name").textContent = r.name;
    const manager = $("#access-manager");  // to people who may not change it: whose workspace it is
    if (manager && r.owner) manager.textContent = `Its manager, ${r.owner},`;
    // The topic is Markdown (as the agents read it), rendered as a discussion's turns are; redrawn when it changed.
    const topicBox = $("#room-topic");
    if (topicBox.dataset.source !== (r.topic || "")) {
      topicBox.replaceChildren(...(r.topic ? [window.ConveneMarkdown.markdownNode(r.topic)] : []));
      topicBox.dataset.source = r.topic || "";
    }
    $("#status-badge").replaceWith(Object.assign(statusBadge(r.status), { id: "status-badge" }));
    $("#round-indicator").textContent = `Round ${r.round}`;
    $("#desk").dataset.status = r.status;
    const closed = CLOSED.includes(r.status);
    $("#read-only").hidden = !closed;
    const idle = r.status === "paused" && r.pauseReason === "idle";
    $("#idle-notice").hidden = !idle;
    showIdleWhy(idle ? r.idlePause : null);
    $("#budget-notice").hidden = !(r.status === "paused" && r.pauseReason === "budget");
    if ($("#budget-notice").hidden) $("#budget-refused").hidden = true;
    // Paused otherwise (by the manager who set a budget already spent, say) while the budget is spent: said as long as it lasts.
    $("#budget-spent-notice").hidden = !(r.status === "paused" && r.pauseReason !== "budget" && budgetUsedUp(r));
    const policy = r.turnPolicy || {};
    $("#pacing-text").textContent = `${counted(policy.maxEvents, "observation")} or ${duration(policy.maxSeconds)}`;
    $("#budget-text").textContent = budgetText(r);
    if (closed) {
      closePacing();
      for (const box of ["#task-form-error", "#observation-error", "#narrative-error"]) formMessage(box, "");
    }
    if (page.idlePauseSeconds) {
      $("#idle-limit").textContent = duration(page.idlePauseSeconds);
      const rule = $("#idle-rule-limit");
      if (rule) rule.textContent = duration(page.idlePauseSeconds);
    }
    if (page.idleRounds) $("#idle-rounds").textContent = String(page.idleRounds);
    // Closed: every writing control goes; a completed scope can still be archived.
    document.querySelectorAll(".manager-only, #observation-form").forEach((n) => { n.hidden = closed && n.id !== "workspace-controls"; });
    // Observations are published while the room runs (active or paused): before that the form says so.
    const form = $("#observation-form");
    if (form) {
      const running = ["active", "paused"].includes(r.status);
      for (const control of form.elements) control.disabled = !running;
      $("#observation-hint").hidden = running || closed;
      if (form.dataset.running !== String(running)) {  // the Reply buttons come and go with it
        form.dataset.running = String(running);
        renderObservations();
      }
      renderReply();
    }
    const verbs = { start: r.status === "draft", pause: r.status === "active", resume: r.status === "paused",
      complete: !closed && r.status !== "draft", archive: r.status !== "archived" };
    for (const [verb, on] of Object.entries(verbs)) {
      const b = document.querySelector(`[data-verb="${verb}"]`);
      if (b) { b.disabled = !on; b.hidden = closed && !on; }
    }
    const end = $("#btn-end-round");
    if (end) { end.disabled = !["active", "paused"].includes(r.status); end.hidden = closed; }
    const toolbar = $("#workspace-controls");
    if (toolbar) toolbar.hidden = r.status === "archived";
    $("#pacing-live").hidden = closed;
    $("#pacing-closed").hidden = !closed;
    // Closed: the narrative's text, decisions and next steps read, nothing edits them.
    for (const box of [$("#narrative-content"), $("#narrative-decisions-edit"), $("#narrative-steps-edit")]) {
      if (box) box.readOnly = closed || !page.canControl;
    }
    renderSeats();
  }

  function renderSeats() {
    const list = $("#seats");
    const seats = state.room.participants || [];
    // Drawn again only when something in it changed (the desk polls while the socket is down: an open select stays open).
    const key = JSON.stringify([seats, state.room.status, state.labels]);
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    // Redrawn when it changed: the agent chosen in each select stays chosen (while its seat is there).
    const refill = (sel, none) => {
      if (!sel) return;
      const keep = sel.value;
      sel.replaceChildren(el("option", { value: "" }, none), ...seats.map((s) => el("option", { value: s.seatId }, seatLabel(s))));
      sel.value = seats.some((s) => String(s.seatId) === keep) ? keep : "";
    };
    refill($("#task-assignee"), "nobody");
    const filter = $("#filter-seat"), filtered = filter.value;
    refill(filter, "all");
    if (filter.value !== filtered) renderObservations();
    list.replaceChildren(...seats.map((s) => {
      const name = seatLabel(s);
      const li = el("li", { "data-seat-id": s.seatId }, el("span", { class: "name" }, name),
        el("span", { class: "muted small spent" }, ` · ${(s.tokensUsed || 0).toLocaleString("en")} tokens`));
      if (page.canControl && !CLOSED.includes(state.room.status)) {
        // The manager swaps the persona a seat works as, and the role it works in (mid-room, one at a time).
        // What the seat itself has is what is selected (`personaOverrideId`, `roleOverrideId`: not the agent's,
        // which `personaId` and `roleId` are while the seat has none of its own): none (the agent's own, null)
        // when it has none, and one the list does not offer shows (disabled) rather than the list's first; every
        // other choice swaps.
        const swap = (label, key, items, current, said) => {
          const options = [{ id: "", name: "none (the agent's own)" }, ...items];
          if (current != null && !items.some((x) => x.id === current)) {
            options.push({ id: current, name: `${label.toLowerCase()} #${current}`, disabled: true });
          }
          // A swap the server refuses is said next to its select (the select is described by that line), as the
          // desk's forms say theirs under them.
          const selId = `seat-${s.seatId}-${key}`, errorId = `${selId}-error`;
          const sel = el("select", { id: selId, "aria-label": `${label} of ${name}`, "aria-describedby": errorId },
            ...options.map((x) => el("option", { value: x.id, selected: x.id === (current ?? ""), disabled: x.disabled }, x.name)));
          sel.addEventListener("change", async () => {
            let refusal = null;
            try {
              await request("PATCH", `${base}/participants/${s.seatId}`, { [key]: sel.value ? Number(sel.value) : null, version: s.version });
              toast(`${name} now ${said} ${sel.value ? sel.selectedOptions[0].textContent : "as the agent itself"}`);
            } catch (err) { refusal = err; }
            list.dataset.key = "";  // drawn again: what the seat has now (a refused choice goes back)
            try { await loadRoom(); } finally {
              if (refusal) {
                refused(`#${errorId}`, refusal);  // next to the select as drawn again (a seat gone meanwhile: a toast)
                const again = document.getElementById(selId);
                if (again) again.focus();
              }
            }
          });
          return [sel, el("span", { id: errorId, class: "error form-error small", role: "alert", hidden: true })];
        };
        li.append(el("span", { class: "muted small" }, " · works as "),
          ...swap("Persona", "personaId", state.personas, s.personaOverrideId, "works as"));
        // Only roles an agent works in; one it holds otherwise (its own, from before) shows, but cannot be chosen again.
        const roles = state.roles.filter((x) => !NOT_WORK_ROLES.includes(x.key));
        const held = state.roles.find((x) => x.id === s.roleOverrideId && NOT_WORK_ROLES.includes(x.key));
        if (held) roles.unshift({ ...held, disabled: true });
        li.append(el("span", { class: "muted small" }, " in the role "),
          ...swap("Role", "roleId", roles, s.roleOverrideId, "works in the role"));
      } else {
        const p = state.personas.find((x) => x.id === s.personaId);
        const r = state.roles.find((x) => x.id === s.roleId);
        li.append(el("span", { class: "muted" }, [p ? ` · ${p.name}` : "", r ? ` · ${r.name}` : ""].join("")));
      }
      return li;
    }));
  }

  // The manager's round pacing and budget: a small form under the header (PATCH turnPolicy, budgetTokens, budgetUsd).
  function openPacing() {
    if (!state.room) return; // the room is still loading: the form has nothing to show yet
    const policy = state.room.turnPolicy || {};
    $("#pacing-events").value = policy.maxEvents;
    $("#pacing-minutes").value = Math.round((policy.maxSeconds / 60) * 100) / 100;
    $("#budget-tokens").value = state.room.budgetTokens ?? "";
    $("#budget-usd").value = state.room.budgetUsd ?? "";
    renderBudgetWarning();
    formMessage("#pacing-error", "");
    $("#pacing-form").hidden = false;
    $("#btn-pacing").setAttribute("aria-expanded", "true");
    $("#pacing-events").focus();
  }

  function closePacing() {
    const form = $("#pacing-form");
    if (!form) return;
    form.hidden = true;
    $("#btn-pacing").setAttribute("aria-expanded", "false");
  }

  // A budget the room has already spent (tokens: no call fits in it; dollars: below the amount, as a model that costs
  // nothing still fits) stops the agents: the workspace pauses now rather than at its next call. Words for the form
  // and for the notice once saved; "" for a budget that leaves room.
  function budgetSpent() {
    const tokens = $("#budget-tokens").value.trim(), usd = $("#budget-usd").value.trim();
    return spentOf(tokens === "" ? null : Number(tokens), usd === "" ? null : Number(usd), state.room.usage);
  }

  // What of a budget (null: no limit) the usage has spent, in words ("" while it leaves a call): its tokens (no call
  // fits in them), or more than its dollars.
  function spentOf(budgetTokens, budgetUsd, usage) {
    const { totalTokens = 0, costUsd = 0 } = usage || {};
    return [budgetTokens != null && (totalTokens || 0) >= budgetTokens ? `${(totalTokens || 0).toLocaleString("en")} tokens` : "",
      budgetUsd != null && (costUsd || 0) > Number(budgetUsd) ? `$${Number(costUsd).toFixed(2)}` : ""].filter(Boolean).join(" and ");
  }

  // The room's budget leaves no call.
  const budgetUsedUp = (r) => spentOf(r.budgetTokens, r.budgetUsd, r.usage) !== "";

  // Before saving: what a budget already spent does, and the Save button says it.
  function renderBudgetWarning() {
    const spent = budgetSpent(), status = state.room.status;
    const what = status === "active" ? "Saving it pauses the workspace at once: its agents make no more calls until you raise the budget and resume it."
      : status === "paused" ? "The workspace stays paused: its agents can make no call until you raise the budget."
        : "Once started, the workspace would pause before its agents' first call.";
    Object.assign($("#budget-warning"), { hidden: !spent, textContent: spent ? `This budget is already spent (${spent} so far). ${what}` : "" });
    $("#btn-pacing-save").textContent = spent && status === "active" ? "Save and pause" : "Save";
  }

  async function savePacing(e) {
    e.preventDefault();
    const policy = { maxEvents: Number($("#pacing-events").value), maxSeconds: Math.round(Number($("#pacing-minutes").value) * 60) };
    const body = { turnPolicy: policy };
    // A budget already spent pauses an active workspace in the same request (all of it is applied, or nothing).
    const spent = budgetSpent(), pausing = !!spent && state.room.status === "active";
    if (pausing) body.status = "paused";
    // An empty budget field is no limit: a budget the room had is removed (null), none stays none.
    for (const [box, key] of [["#budget-tokens", "budgetTokens"], ["#budget-usd", "budgetUsd"]]) {
      const value = $(box).value.trim();
      if (value !== "") body[key] = Number(value);
      else if (state.room[key] != null) body[key] = null;
    }
    let saved = false;
    try {
      await request("PATCH", base, body);
      closePacing();
      saved = true;
    } catch (err) { refused("#pacing-error", err, PACING_WORDS); }
    await loadRoom();
    // What was saved, the budget too (the manager may have changed only that), as the room now has it.
    if (saved) {
      const limits = budgetLimits(state.room);
      toast(`Saved: a round ends after ${counted(policy.maxEvents, "observation")} or ${duration(policy.maxSeconds)}; `
        + (limits ? `the budget is ${limits}.` : "no budget caps it.")
        + (!spent ? "" : ` That is already spent (${spent}): ${pausing ? "the workspace is paused now; its agents make no more calls"
          + " until you raise the budget and resume it." : state.room.status === "paused" ? "the workspace stays paused until you raise the budget."
          : "the workspace would pause before its agents' first call."}`));
    }
  }

  // Observations: the newest OBS_PAGE when the desk opens, then only what came after the last one
  // shown (one fetch at a time, every page of it); older ones a page at a time on request.
  const OBS_PAGE = 1000;
  const obsView = { lastSeq: 0, older: false, queue: Promise.resolve() };
  function loadObservations() {
    obsView.queue = obsView.queue.catch(() => {}).then(fetchObservations);
    return obsView.queue;
  }

  async function fetchObservations() {
    if (!state.observations.length) {
      const { data, meta } = await request("GET", `${base}/observations?latest=true&limit=${OBS_PAGE}`);
      state.observations = data;
      if (obsView.loaded) arrived(data);  // the first ones of a room that had none when the desk opened
      obsView.older = !!meta.hasMore;
    } else {
      for (;;) {
        const { data, meta } = await request("GET", `${base}/observations?afterSeq=${obsView.lastSeq}&limit=${OBS_PAGE}`);
        state.observations = state.observations.concat(data);
        arrived(data);
        if (data.length) obsView.lastSeq = data[data.length - 1].seq;
        if (!meta.hasMore || !data.length) break;
      }
    }
    obsView.loaded = true;
    if (state.observations.length) obsView.lastSeq = state.observations[state.observations.length - 1].seq;
    // Drawn again when there is something new (or the authors' names changed): polling finds nothing new mostly.
    const key = JSON.stringify([state.observations.length, obsView.lastSeq, state.labels]);
    if (obsView.drawn !== key) keepingPlace(showObservations);
    obsView.drawn = key;
    placeArrivals();
  }

  // What arrived since the desk opened, said in one line above the list (read out once by screen readers, which
  // the list itself is not: it is drawn again whole). New observations the reader cannot see where they are (further
  // down a long list, or the reader further down the desk) are counted on a button that brings them into view,
  // and the line says so; the desk never scrolls by itself.
  const news = { count: 0, fresh: [], unseen: new Set() };
  function arrived(rows) {
    if (!rows.length) return;
    news.count += rows.length;
    news.fresh.push(...rows.map((o) => o.id));
    const o = rows[rows.length - 1];
    $("#observations-new-since").textContent = `${counted(news.count, "new observation")} since you opened the desk; the latest: `
      + `${o.type} by ${authorName(o)}, round ${o.round}.`;
  }

  const observationItem = (obsId) => document.querySelector(`#observations [data-observation-id="${obsId}"]`);
  // Some of it shows in the window.
  function inView(node) {
    const r = node.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight && r.height > 0;
  }

  // Once drawn: the new observations the list shows out of the reader's sight are counted (those the filters hide are
  // not: there is nothing to bring into view), in one addition to the line, read out with it.
  function placeArrivals() {
    const fresh = news.fresh;
    news.fresh = [];
    let added = 0;
    for (const obsId of fresh) {
      const item = observationItem(obsId);
      if (item && !inView(item) && !news.unseen.has(obsId)) { news.unseen.add(obsId); added += 1; }
    }
    if (!added) return;
    const n = news.unseen.size;
    $("#observations-new-unseen").textContent = ` ${counted(n, "new observation")} ${n === 1 ? "is" : "are"} out of view: `
      + `the “${counted(n, "new observation")}” button brings ${n === 1 ? "it" : "them"} into view.`;
    watchUnseen();
  }

  // An unseen observation scrolled into view by the reader is seen.
  const seenWatch = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    let seen = false;
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      news.unseen.delete(Number(entry.target.dataset.observationId));
      seenWatch.unobserve(entry.target);
      seen = true;
    }
    if (seen) renderUnseen();
  }) : null;

  // The list is drawn again whole: the unseen observations it still shows are watched again.
  function watchUnseen() {
    if (seenWatch) seenWatch.disconnect();
    for (const obsId of [...news.unseen]) {
      const item = observationItem(obsId);
      if (!item) news.unseen.delete(obsId);  // filtered out meanwhile
      else if (seenWatch) seenWatch.observe(item);
    }
    renderUnseen();
  }

  function renderUnseen() {
    const n = news.unseen.size, button = $("#btn-new-observations");
    button.hidden = !n;
    if (!n) {
      $("#observations-new-unseen").textContent = "";
      return;
    }
    const first = firstUnseen();
    const below = !first || first.getBoundingClientRect().top >= 0;
    button.replaceChildren(counted(n, "new observation"), " ", el("span", { "aria-hidden": "true" }, below ? "↓" : "↑"));
  }

  function firstUnseen() {
    return [...document.querySelectorAll("#observations [data-observation-id]")]
      .find((item) => news.unseen.has(Number(item.dataset.observationId))) || null;
  }

  // The button: the first of them at the top of the window (those after it follow it), and the focus on it. Those
  // still out of view (a reply far above a new observation at the end, say) stay counted: pressed again, it goes on.
  function showUnseen() {
    const first = firstUnseen();
    if (!first) { watchUnseen(); return; }
    first.tabIndex = -1;
    first.scrollIntoView({ block: "start" });
    first.focus({ preventScroll: true });
    for (const obsId of [...news.unseen]) {
      const item = observationItem(obsId);
      if (item === first || (item && inView(item))) {
        news.unseen.delete(obsId);
        if (seenWatch) seenWatch.unobserve(item);
      }
    }
    renderUnseen();
  }

  // The list is drawn again whole with what arrived: the observation at the top of the window stays where it was on
  // the screen, so what the reader is reading does not move (a reply added above it, say). Drawn again for what the
  // reader asked (a filter, older ones), it is laid out as it comes.
  function keepingPlace(draw) {
    const items = [...document.querySelectorAll("#observations [data-observation-id]")];
    const anchor = items.find((item) => { const top = item.getBoundingClientRect().top; return top >= 0 && top < window.innerHeight; });
    const before = anchor && anchor.getBoundingClientRect().top;
    draw();
    const again = anchor && observationItem(anchor.dataset.observationId);
    if (again) {
      const moved = again.getBoundingClientRect().top - before;
      if (moved) window.scrollBy(0, moved);
    }
  }

  function loadOlderObservations() {
    obsView.queue = obsView.queue.catch(() => {}).then(fetchOlderObservations);
    return obsView.queue;
  }

  async function fetchOlderObservations() {
    if (!state.observations.length) return;
    const { data, meta } = await request("GET", `${base}/observations?latest=true&limit=${OBS_PAGE}&beforeSeq=${state.observations[0].seq}`);
    state.observations = data.concat(state.observations);
    obsView.older = !!meta.hasMore;
    obsView.drawn = JSON.stringify([state.observations.length, obsView.lastSeq, state.labels]);
    showObservations();
  }

  function showObservations() {
    const more = $("#observations-older");
    more.hidden = !obsView.older;
    $("#observations-older-note").textContent = obsView.older
      ? `The ${state.observations.length.toLocaleString("en")} newest observations are shown; older ones are not loaded.` : "";
    const rounds = [...new Set(state.observations.map((o) => o.round))];
    const sel = $("#filter-round");
    const keep = sel.value;
    sel.replaceChildren(el("option", { value: "" }, "all"), ...rounds.map((n) => el("option", { value: n }, `Round ${n}`)));
    sel.value = keep;
    renderObservations();
    renderNarrative(false);  // its blockers are shown with their text
  }

  function renderObservations() {
    const type = $("#filter-type").value, round = $("#filter-round").value, seat = $("#filter-seat").value;
    const open = $("#filter-open").checked;
    const answered = new Set(state.observations.map((o) => o.respondingToId).filter(Boolean));
    const shown = state.observations.filter((o) => (!type || o.type === type) && (!round || String(o.round) === round)
      && (!seat || String(o.seatId) === seat) && (!open || (["question", "blocker"].includes(o.type) && !answered.has(o.id))));
    const byParent = new Map();
    const ids = new Set(shown.map((o) => o.id));
    for (const o of shown) {
      const parent = ids.has(o.respondingToId) ? o.respondingToId : null;
      if (!byParent.has(parent)) byParent.set(parent, []);
      byParent.get(parent).push(o);
    }
    const canReply = replyable();
    const item = (o) => el("li", { class: `obs obs-${o.type}`, "data-observation-id": o.id, "data-type": o.type },
      el("span", { class: `badge type-${o.type}` }, o.type), " ",
      el("strong", {}, authorName(o)), o.rehearsal ? " " : null, rehearsalTag(o), el("span", { class: "muted small" }, ` · round ${o.round}`
        + (o.confidence !== null ? ` · confidence ${o.confidence.toFixed(2)}` : "") + (o.respondingToId ? ` · re #${o.respondingToId}` : "")),
      el("p", {}, o.content),
      canReply && ANSWERABLE.includes(o.type) ? el("button", { type: "button", class: "btn btn-link btn-small", "data-action": "reply",
        "aria-label": `Reply to ${o.type} #${o.id}`, "aria-controls": "observation-form" }, "Reply") : null,
      byParent.has(o.id) ? el("ol", { class: "replies" }, ...byParent.get(o.id).map(item)) : null);
    $("#observations").replaceChildren(...(byParent.get(null) || []).map(item));
    watchUnseen();
    const empty = $("#observations-empty");
    empty.hidden = shown.length > 0;
    empty.textContent = state.observations.length ? "No observation matches these filters."
      : "No observations yet: once the room runs, the agents publish theirs every round.";
  }

  // Questions and blockers are answered by a reply (an observation responding to them): until one exists they are
  // open (the "Unanswered" filter, the report's "Still open"). The observation form publishes the reply.
  const ANSWERABLE = ["question", "blocker"];
  const REPLY_TYPE = { question: "clarification", blocker: "solution" };  // what a reply is first offered as

  function replyable() {
    return !!$("#observation-form") && !!state.room && ["active", "paused"].includes(state.room.status);
  }

  function replyTo(o) {
    state.replyTo = o;
    if (o) $("#obs-type").value = REPLY_TYPE[o.type] || "observation";
    renderReply();
    if (o) $("#obs-content").focus();
  }

  // The reply target above the form's fields, with a way out of it.
  function renderReply() {
    const box = $("#obs-reply");
    if (!box) return;
    const o = state.replyTo;
    if (o && !replyable()) state.replyTo = null;
    box.hidden = !state.replyTo;
    if (!state.replyTo) return;
    const text = o.content.length > 140 ? `${o.content.slice(0, 140)}…` : o.content;
    $("#obs-reply-text").textContent = `Replying to ${o.type} #${o.id} by ${authorName(o)}: “${text}”`;
  }

  // The narratives, one per ended round. The round chosen stays chosen; a manager who was on the latest
  // follows a new round's narrative when it arrives, unless the editor holds unsaved changes: then the
  // desk says that it arrived, and the changes stay.
  async function loadNarratives() {
    const before = state.narratives;
    state.narratives = (await request("GET", `${base}/narratives`)).data;
    const sel = $("#narrative-round");
    const keep = sel.value;
    const latest = (list) => (list.length ? String(list[list.length - 1].id) : "");
    const arrived = before.length && latest(state.narratives) && !before.some((n) => String(n.id) === latest(state.narratives));
    sel.replaceChildren(...state.narratives.map((n) => el("option", { value: n.id }, `Round ${n.round}`)));
    // Opened again with unsaved changes kept in the tab: their round is the one shown.
    const drafted = !keep && state.narratives.find((n) => drafts()[n.id]);
    if (keep && state.narratives.some((n) => String(n.id) === keep)) sel.value = keep;
    else if (drafted) sel.value = String(drafted.id);
    else if (state.narratives.length) sel.value = latest(state.narratives);
    if (arrived && keep === latest(before)) {
      if (editorUntouched()) sel.value = latest(state.narratives);
      else state.arrived = latest(state.narratives);
    }
    $("#narrative-body").hidden = state.narratives.length === 0;
    renderPending();
    renderNarrative(false);
  }

  // Rounds that ended and whose narrative is still being written (by the narrator agent, which may take a while) are
  // said in the narrative's section, so the manager knows it is coming. A round the closing of the scope ended without
  // observations gets none.
  async function loadRounds() {
    const rounds = (await request("GET", `${base}/rounds`)).data;
    state.pendingRounds = rounds.filter((r) => r.endedAt && !r.narrative && (r.endedBy !== "scope" || r.eventCount > 0))
      .map((r) => r.number);
    renderPending();
  }

  function renderPending() {
    const pending = (state.pendingRounds || []).filter((n) => !state.narratives.some((x) => x.round === n));
    const box = $("#narrative-pending");
    box.hidden = !pending.length;
    box.textContent = !pending.length ? "" : pending.length === 1
      ? `Round ${pending[0]} has ended: its narrative is being written and appears here once it is ready.`
      : `Rounds ${pending.join(", ")} have ended: their narratives are being written and appear here once they are ready.`;
    $("#narrative-empty").hidden = state.narratives.length > 0 || pending.length > 0;
  }

  // The editor holds what was loaded into it (nothing typed since).
  function editorUntouched() {
    const fields = editorFields();
    return !state.editing || Object.keys(fields).every((k) => fields[k].value === state.editing[k]);
  }

  // A newer round's narrative came while the manager's changes to another were unsaved: said above the editor.
  function renderArrived() {
    const box = $("#narrative-new");
    const chosen = $("#narrative-round").value;
    if (state.arrived === chosen) state.arrived = null;
    const n = state.arrived && state.narratives.find((x) => String(x.id) === state.arrived);
    const shown = state.narratives.find((x) => String(x.id) === chosen);
    box.hidden = !n;
    if (!n) return;
    box.textContent = editorUntouched() || !shown ? `Round ${n.round}'s narrative has arrived: choose Round ${n.round} to read it.`
      : `Round ${n.round}'s narrative has arrived. Your unsaved changes to round ${shown.round} are still in the editor:`
        + ` save them, then choose Round ${n.round}.`;
  }

  function renderNarrative(force) {
    renderArrived();
    const n = state.narratives.find((x) => String(x.id) === $("#narrative-round").value);
    if (!n) return;
    $("#narrative-generated").textContent = n.generatedContent;
    $("#narrative-rehearsal").hidden = !n.rehearsal;
    renderEdited(n);
    renderNarrativeRead(n);
    const fields = editorFields();
    const saved = { text: n.content, decisions: lines(n.keyDecisions), steps: lines(n.nextSteps) };
    // The editor follows the narrative unless the manager changed something in it since it was loaded. Changes not
    // saved yet are kept in the tab (a reload, or another round chosen meanwhile, brings them back into the editor),
    // with the version they were made on: when somebody else edited it since, the desk says so at once.
    const draft = drafts()[n.id];
    if (draft && (force || state.editing === null || state.editing.id !== n.id)) {
      // A field the draft did not change (it holds the text it was made on) shows the narrative as it is now.
      const changed = (k) => draft[k] !== undefined && draft[k] !== (draft.base || {})[k];
      for (const [k, box] of Object.entries(fields)) box.value = changed(k) ? draft[k] : saved[k];
      state.editing = { id: n.id, version: n.version, ...saved };
      state.restored = n.id;
      if (draft.version !== n.version) state.conflict = n;  // changed meanwhile: said at once (renderConflict)
    } else if (force || state.editing === null || state.editing.id !== n.id || editorUntouched()) {
      for (const [k, box] of Object.entries(fields)) box.value = saved[k];
      state.editing = { id: n.id, version: n.version, ...saved };
    } else if (n.version !== state.editing.version && !state.saving) {
      changedMeanwhile(n);
    }
    keepDraft();
    renderConflict();
    const decisions = $("#narrative-decisions"), steps = $("#narrative-steps");
    if (decisions) decisions.textContent = (n.keyDecisions || []).join("; ") || "none";
    if (steps) steps.textContent = (n.nextSteps || []).join("; ") || "none";
    $("#narrative-blockers").textContent = (n.blockers || []).map((id) => {
      const o = state.observations.find((x) => x.id === id);
      return o ? `#${id} ${o.content}` : `#${id}`;
    }).join("; ") || "none";
    renderNarrativeLength();
  }

  // The narrative in the editor was changed meanwhile (another tab, another manager) while the editor holds unsaved
  // changes: a field not changed here follows it, the changed ones stay, and the desk says at once what it now holds;
  // saving then replaces it (the fields not changed here are not sent, so theirs stay).
  function changedMeanwhile(current) {
    const saved = { text: current.content, decisions: lines(current.keyDecisions), steps: lines(current.nextSteps) };
    for (const [k, box] of Object.entries(editorFields())) if (box.value === state.editing[k]) box.value = saved[k];
    state.editing = { id: current.id, version: current.version, ...saved };
    state.conflict = current;
    renderNarrativeLength();
  }

  function renderConflict() {
    const box = $("#narrative-conflict");
    if (!box) return;
    const c = state.conflict;
    if (c && (!state.editing || state.editing.id !== c.id || editorUntouched())) state.conflict = null;
    box.hidden = !state.conflict;
    if (!state.conflict) return;
    const n = state.narratives.find((x) => x.id === c.id) || c;
    $("#narrative-conflict-lead").textContent = `Round ${n.round}'s narrative was changed meanwhile`
      + `${c.editedBy ? ` by ${c.editedBy}` : ""}, after you began editing it. It now reads:`;
    $("#narrative-current").textContent = c.content;
    $("#narrative-current-lists").textContent = `Key decisions: ${(c.keyDecisions || []).join("; ") || "none"}. `
      + `Next steps: ${(c.nextSteps || []).join("; ") || "none"}.`;
  }

  // The manager's unsaved narrative changes, by narrative id ({version, base, text, decisions, steps}: base is what they
  // were made on), kept in this tab's
  // session storage: a reload, or choosing another round and back, does not lose them.
  const DRAFTS = `convene.desk.${id}.narrativeDrafts`;
  function drafts() {
    if (!page.canControl) return {};
    try { return JSON.parse(window.sessionStorage.getItem(DRAFTS) || "{}") || {}; } catch (err) { return {}; }
  }

  // What the editor holds now is kept as the narrative's draft, or the draft goes once it holds what is saved.
  function keepDraft() {
    if (!page.canControl || !state.editing) return;
    const all = drafts();
    if (editorUntouched() || CLOSED.includes(state.room && state.room.status)) delete all[state.editing.id];
    else {
      const { text, decisions, steps } = state.editing;  // what the changes were made on
      all[state.editing.id] = { version: state.editing.version, base: { text, decisions, steps },
        ...Object.fromEntries(Object.entries(editorFields()).map(([k, box]) => [k, box.value])) };
    }
    try {
      if (Object.keys(all).length) window.sessionStorage.setItem(DRAFTS, JSON.stringify(all));
      else window.sessionStorage.removeItem(DRAFTS);
    } catch (err) { /* storage full or off: the editor still holds the text */ }
    renderRestored();
  }

  // Changes brought back into the editor say so above it, with a way to drop them.
  function renderRestored() {
    const box = $("#narrative-restored");
    if (!box) return;
    const n = state.editing && state.restored === state.editing.id && !editorUntouched()
      && state.narratives.find((x) => x.id === state.editing.id);
    if (!n) state.restored = null;
    box.hidden = !n;
    if (n) $("#narrative-restored-text").textContent = `Your unsaved changes to round ${n.round}'s narrative are back in the editor: save them,`
      + " or discard them to go back to the saved narrative.";
  }

  function discardDraft() {
    const n = state.editing;
    if (!n) return;
    const all = drafts();
    delete all[n.id];
    try { window.sessionStorage.setItem(DRAFTS, JSON.stringify(all)); } catch (err) { /* nothing kept */ }
    state.restored = null;
    renderNarrative(true);
    $("#narrative-content").focus();
  }

  // Whether the narrative was edited, by whom and when ("edited by anna, 14:02", the full time on hover; a day
  // other than today is named); one never edited holds the generated text and says so.
  function renderEdited(n) {
    const box = $("#narrative-edited");
    if (!n.editedAt) { box.replaceChildren("not edited: the generated text"); return; }
    // In the browser's language and clock (12- or 24-hour), as the other times on the pages are.
    const at = new Date(n.editedAt);
    const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const day = at.toDateString() === new Date().toDateString() ? ""
      : `${at.toLocaleDateString([], { day: "numeric", month: "short", year: at.getFullYear() === new Date().getFullYear() ? undefined : "numeric" })} `;
    box.replaceChildren(`edited${n.editedBy ? ` by ${n.editedBy}` : ""}, `,
      el("time", { datetime: n.editedAt, title: at.toLocaleString([], { dateStyle: "full", timeStyle: "long" }) }, `${day}${time}`));
  }

  // Characters as the server counts them: one for each code point (an emoji is one, not two).
  function chars(text) { let n = 0; for (const _ of String(text)) n += 1; return n; }

  // Near `limit`, the number of characters of the `editor` in `box` (the line it is described by); over it, by how
  // much, and its `save` button says why it waits. The text stays in the editor as typed: the manager shortens it.
  function renderLength(editor, box, limit, save) {
    if (!editor || !box || !limit) return;
    const n = chars(editor.value), over = n - limit;
    const num = (x) => x.toLocaleString("en");
    box.hidden = n < limit * NEAR_LIMIT;
    box.classList.toggle("error", over > 0);
    box.textContent = over > 0
      ? `${num(n)} characters: ${num(over)} over the limit of ${num(limit)}. Shorten the text to save it; what you wrote stays here.`
      : `${num(n)} of ${num(limit)} characters.`;
    save.disabled = over > 0;
    save.title = over > 0 ? `The text is ${num(over)} characters over the limit of ${num(limit)}: shorten it to save.` : "";
  }

  function renderTaskDescriptionLength() {
    renderLength($("#task-description"), $("#task-description-length"), TASK_DESCRIPTION_LIMIT, $("#task-add"));
  }

  function renderNarrativeLength() {
    renderLength($("#narrative-content"), $("#narrative-length"), NARRATIVE_LIMIT, $("#btn-save-narrative"));
  }

  // A task's description past its limit, in the desk's words ("" when it fits).
  function descriptionProblem(text) {
    const n = chars(text);
    return TASK_DESCRIPTION_LIMIT && n > TASK_DESCRIPTION_LIMIT
      ? `The description has ${n.toLocaleString("en")} characters: at most ${TASK_DESCRIPTION_LIMIT.toLocaleString("en")}.` : "";
  }

  // The narrative's editable parts, the manager's only: its text, its decisions and next steps (one per line).
  // People who may only view it have none: they read it (renderNarrativeRead).
  function editorFields() {
    if (!$("#narrative-content")) return {};
    return { text: $("#narrative-content"), decisions: $("#narrative-decisions-edit"), steps: $("#narrative-steps-edit") };
  }

  // The narrative's text as people who may only view it read it: Markdown, like the topic and the task descriptions
  // (sanitized by ConveneMarkdown), drawn again only when another narrative or version of it is shown.
  function renderNarrativeRead(n) {
    const box = $("#narrative-read");
    if (!box) return;
    const key = `${n.id}:${n.version}`;
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren(window.ConveneMarkdown.markdownNode(n.content));
  }

  function lines(items) { return (items || []).join("\n"); }
  function items(text) { return text.split("\n").map((l) => l.trim()).filter(Boolean); }

  // What the narrative editor holds that the API would refuse anyway, in the desk's words ("" when nothing).
  function narrativeProblem(fields) {
    if (blank(fields.text.value)) return "The narrative's text is empty (spaces do not count): write what happened in the round.";
    const n = chars(fields.text.value);
    if (NARRATIVE_LIMIT && n > NARRATIVE_LIMIT) {
      return `The narrative's text has ${n.toLocaleString("en")} characters: at most ${NARRATIVE_LIMIT.toLocaleString("en")}.`;
    }
    for (const [key, label] of [["decisions", "key decisions"], ["steps", "next steps"]]) {
      const n = fields[key] ? items(fields[key].value).length : 0;
      if (n > LIST_ITEMS) return `At most ${LIST_ITEMS} ${label}, one per line: there are ${n}.`;
    }
    return "";
  }

  async function saveNarrative() {
    const n = state.editing;
    if (!n) return;
    const fields = editorFields();
    const problem = narrativeProblem(fields);
    formMessage("#narrative-error", problem);
    if (problem) return;
    state.saving = true;
    try {
      const body = { content: fields.text.value, version: n.version };
      if (fields.decisions && fields.decisions.value !== n.decisions) body.keyDecisions = items(fields.decisions.value);
      if (fields.steps && fields.steps.value !== n.steps) body.nextSteps = items(fields.steps.value);
      const sent = Object.fromEntries(Object.entries(fields).map(([k, box]) => [k, box.value]));
      const saved = (await request("PATCH", `${base}/narratives/${n.id}`, body)).data;
      state.saving = false;
      state.conflict = null;
      // What was saved is the editor's base now: typing on while the list reloads is kept.
      state.editing = { id: n.id, version: saved.version, text: saved.content, decisions: lines(saved.keyDecisions), steps: lines(saved.nextSteps) };
      // The server keeps the text and the lists trimmed (blank lines are no items): a field still holding what
      // was sent shows what was saved, so the editor does not count it as unsaved changes.
      for (const [k, box] of Object.entries(fields)) if (box.value === sent[k]) box.value = state.editing[k];
      renderNarrativeLength();
      state.restored = null;
      keepDraft();
      toast("Narrative saved");
      await loadNarratives();
    } catch (err) {
      state.saving = false;
      if (err.code === "stale_version" && err.details.current) {
        // The desk learns the narrative as it is now (no event may have told it): discarding goes back to this one.
        state.narratives = state.narratives.map((x) => (x.id === err.details.current.id ? err.details.current : x));
        renderEdited(err.details.current);
        changedMeanwhile(err.details.current);
        keepDraft();  // saved again, it replaces the current one
        renderConflict();
      } else refused("#narrative-error", err);
    }
  }

  // A task's next step as the manager moves it on (for the seat that holds it).
  const NEXT_STEP = { pending: ["claim", "Claim"], claimed: ["start", "Start"], in_progress: ["complete", "Complete"] };

  async function loadTasks() {
    state.tasks = (await request("GET", `${base}/tasks`)).data;
    $("#tasks-empty").hidden = state.tasks.length > 0;
    const board = $("#board");
    const key = JSON.stringify([state.tasks, state.room && state.room.status, state.labels]);
    if (board.dataset.key !== key) {  // drawn again only when a task changed (see renderSeats)
      board.dataset.key = key;
      for (const column of document.querySelectorAll("#board .column")) {
        column.querySelector("ul").replaceChildren(...state.tasks.filter((t) => t.status === column.dataset.status).map(taskCard));
      }
    }
    renderTaskEditor();
  }

  function taskCard(t) {
    const li = el("li", { class: "task", "data-task-id": t.id, "data-status": t.status },
      el("span", { class: `badge priority priority-${t.priority}` }, `P${t.priority}`), " ", el("span", { class: "task-title" }, t.title),
      el("div", { class: "muted small" }, [t.assigneeId ? `assigned to ${seatName(t.assigneeId)}` : "unassigned",
        t.claimedById ? ` · claimed by ${seatName(t.claimedById)}` : ""].join("")),
      t.description ? taskDescription(t) : null);
    if (!page.canControl || CLOSED.includes(state.room.status) || t.status === "completed") return li;
    const [verb, label] = NEXT_STEP[t.status];
    const unassigned = verb === "claim" && !t.assigneeId;
    // Why Claim waits, in words anyone reads (a disabled button's title reaches neither the keyboard nor a phone).
    if (unassigned) li.append(el("div", { class: "muted small", id: `task-${t.id}-why` }, CLAIM_WAITS));
    // A Claim that waits stays in the Tab order (aria-disabled, not disabled), so that the keyboard reaches it and a
    // screen reader says why it waits (its description); pressing it says that again and does nothing else.
    li.append(el("div", { class: "task-actions" },
      el("button", { type: "button", class: "btn btn-link btn-small", "data-action": "edit", "aria-expanded": "false",
        "aria-label": `Edit ${t.title}` }, "Edit"),
      el("button", { type: "button", class: "btn btn-small", "data-action": verb, "aria-disabled": unassigned ? "true" : null,
        "aria-describedby": unassigned ? `task-${t.id}-why` : null, "aria-label": `${label} ${t.title}` }, label)));
    return li;
  }
  const CLAIM_WAITS = "Assign it to an agent (Edit) to claim it.";

  // A task's description, Markdown rendered (and sanitized) as the room's topic is; a long one scrolls in its card.
  function taskDescription(t) {
    const box = window.ConveneMarkdown.markdownNode(t.description, { className: "markdown task-description" });
    box.tabIndex = 0;  // a scrolling box is reached by the keyboard too
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", `Description of ${t.title}`);
    return box;
  }

  // What the manager is typing in the task form and the task editor is kept in this tab's session storage, so a
  // reload brings it back (as the narrative's unsaved changes); null removes it.
  const TASK_FORM = `convene.desk.${id}.taskForm`, TASK_DRAFT = `convene.desk.${id}.taskDraft`;
  function stash(key, value) {
    try {
      if (value) window.sessionStorage.setItem(key, JSON.stringify(value)); else window.sessionStorage.removeItem(key);
    } catch (err) { /* storage full or off: the form still holds the text */ }
  }
  function stashed(key) {
    try { return JSON.parse(window.sessionStorage.getItem(key) || "null"); } catch (err) { return null; }
  }

  function keepTaskForm() {
    const values = { title: $("#task-title").value, description: $("#task-description").value,
      priority: $("#task-priority").value, assignee: $("#task-assignee").value };
    stash(TASK_FORM, values.title || values.description ? values : null);
  }

  function restoreTaskForm() {
    const kept = stashed(TASK_FORM);
    if (!kept || !$("#task-form") || $("#task-form").hidden) return;
    $("#task-title").value = kept.title || "";
    $("#task-description").value = kept.description || "";
    $("#task-priority").value = kept.priority || "3";
    if ([...$("#task-assignee").options].some((o) => o.value === kept.assignee)) $("#task-assignee").value = kept.assignee;
    renderTaskDescriptionLength();
  }

  // A task's fields as its editor holds them (what the manager may change).
  const TASK_FIELDS = ["title", "description", "priority", "assignee"];
  function taskFields(t) {
    return { title: t.title, description: t.description || "", priority: String(t.priority), assignee: t.assigneeId ? String(t.assigneeId) : "" };
  }
  const sameValue = (a, b) => String(a ?? "") === String(b ?? "");
  // The editor holds what it was opened on (nothing changed in it since, or changed back).
  function taskUntouched(draft) { return TASK_FIELDS.every((k) => sameValue(draft[k], draft.base[k])); }

  // The task in the editor changed since the editor was opened on it (`t`, newer than the version the draft was made on):
  // the fields the manager did not change follow it, the changed ones stay, and the draft is made on `t` from now on, so
  // that saving replaces what changed meanwhile. Changed by somebody else (another tab, its agent) while the manager
  // had changed something: the desk says so at once, with what the task holds now (renderTaskConflict). `ours`: a step
  // the desk itself just took.
  function followTask(draft, t, ours = false) {
    if (!draft.base) Object.assign(draft, { base: taskFields(t), version: t.version });  // a draft kept before tasks had versions
    if (t.version <= draft.version) return;
    const touched = !taskUntouched(draft), now = taskFields(t);
    for (const k of TASK_FIELDS) if (sameValue(draft[k], draft.base[k])) draft[k] = now[k];
    Object.assign(draft, { base: now, version: t.version });
    if (touched && !ours) state.taskConflict = t;
    stash(TASK_DRAFT, draft);
  }

  // The editor of the task being edited, under the board (the board's columns are narrow).
  function renderTaskEditor() {
    const box = $("#task-edit");
    if (!box) return;
    const t = state.taskDraft && state.tasks.find((x) => x.id === state.taskDraft.id);
    if (!t || t.status === "completed" || CLOSED.includes(state.room.status)) state.taskDraft = null;
    if (state.taskDraft && state.taskBusy !== t.id) followTask(state.taskDraft, t);  // the desk's own write: its answer says
    const key = state.taskDraft ? `${t.id}:${t.status}` : "";
    if (box.dataset.editing !== key) {  // a redraw of the board leaves an open editor (and its focus) alone
      box.replaceChildren(...(state.taskDraft ? [el("h3", { id: "task-edit-heading" }), taskEditor(t), taskConflictBox()] : []));
      box.dataset.editing = key;
    }
    if (state.taskDraft) fillTaskEditor(t);
    box.hidden = !state.taskDraft;
    stash(TASK_DRAFT, state.taskDraft);
    renderTaskConflict();
    document.querySelectorAll("#board [data-action=edit]").forEach((b) => {
      b.setAttribute("aria-expanded", String(!!state.taskDraft && b.closest("[data-task-id]").dataset.taskId === String(state.taskDraft.id)));
    });
  }

  // The inline editor of one task: its title, description, priority and (while nobody claimed it) assignee. What the
  // manager typed survives the board being redrawn by live events.
  function taskEditor(t) {
    const draft = state.taskDraft;
    const seats = state.room.participants || [];
    const form = el("form", { class: "task-editor writer" },
      el("label", {}, "Title ", el("input", { name: "title", value: draft.title, maxlength: "300", required: true })),
      el("label", { class: "task-description-field" }, "Description (Markdown) ",
        Object.assign(el("textarea", { name: "description", rows: "4", "aria-describedby": "task-edit-length" }), { value: draft.description })),
      el("p", { id: "task-edit-length", class: "muted small length", "aria-live": "polite", hidden: true }),
      el("label", {}, "Priority ", el("select", { name: "priority" },
        ...[1, 2, 3, 4, 5].map((n) => el("option", { value: n, selected: n === Number(draft.priority) }, n)))),
      t.status === "pending" ? el("label", {}, "Assign to ", el("select", { name: "assignee" },
        el("option", { value: "" }, "nobody"),
        ...seats.map((s) => el("option", { value: s.seatId, selected: String(s.seatId) === String(draft.assignee) }, seatLabel(s))))) : null,
      el("button", { class: "btn btn-small", type: "submit" }, "Save"),
      el("button", { class: "btn btn-ghost btn-small", type: "button", "data-action": "cancel" }, "Cancel"),
      el("button", { class: "btn btn-danger btn-small", type: "button", "data-action": "delete" }, "Delete task"),
      el("p", { id: "task-edit-error", class: "error form-error", role: "alert", hidden: true }));
    renderTaskEditLength(form);
    form.querySelector("[data-action=cancel]").addEventListener("click", () => {
      state.taskDraft = null;
      state.taskConflict = null;
      renderTaskEditor();
    });
    form.querySelector("[data-action=delete]").addEventListener("click", () => { deleteTask(t).catch(fail); });
    form.addEventListener("input", () => {
      draft.title = form.elements.title.value;
      draft.description = form.elements.description.value;
      draft.priority = form.elements.priority.value;
      if (form.elements.assignee) draft.assignee = form.elements.assignee.value;
      stash(TASK_DRAFT, draft);
      renderTaskEditLength(form);
      renderTaskConflict();  // changed back to what the task holds: nothing conflicts any more
    });
    form.addEventListener("submit", (e) => { e.preventDefault(); saveTask(); });
    return form;
  }

  function renderTaskEditLength(form) {
    renderLength(form.elements.description, form.querySelector(".length"), TASK_DESCRIPTION_LIMIT, form.querySelector("button[type=submit]"));
  }

  // The open editor shows the draft: a field that followed a change made meanwhile shows the task's value now.
  function fillTaskEditor(t) {
    const form = document.querySelector("#task-edit form"), draft = state.taskDraft;
    if (!form || !draft) return;
    $("#task-edit-heading").textContent = `Edit “${t.title}”`;
    for (const k of TASK_FIELDS) {
      const control = form.elements[k];
      if (control && !sameValue(control.value, draft[k])) control.value = draft[k];
    }
    renderTaskEditLength(form);
  }

  // Under the editor: the task changed meanwhile (another tab, its agent) while the manager had changed it too; what it
  // holds now, and a way to keep that instead of the manager's changes.
  function taskConflictBox() {
    const discard = el("button", { type: "button", class: "btn btn-link btn-small", "data-action": "discard" }, "discard your changes");
    discard.addEventListener("click", discardTaskChanges);
    return el("div", { id: "task-conflict", class: "alert alert-error", role: "alert", hidden: true },
      el("p", { id: "task-conflict-lead" }), el("ul", { id: "task-current", class: "small" }),
      el("p", {}, "Your changes are still in the editor: Save applies them to the task as it is now (what you did not "
        + "change stays as it is now), or ", discard, " and keep it."));
  }

  function renderTaskConflict() {
    const box = document.getElementById("task-conflict");
    const draft = state.taskDraft, c = state.taskConflict;
    if (c && (!draft || draft.id !== c.id || taskUntouched(draft))) state.taskConflict = null;
    if (!box) return;
    box.hidden = !state.taskConflict;
    if (!state.taskConflict) return;
    const now = state.tasks.find((x) => x.id === c.id && x.version >= c.version) || c;
    $("#task-conflict-lead").textContent = "This task was changed in another tab (or by its agent) after you began editing it. It now reads:";
    const status = now.status.replace("_", " ") + (now.claimedById ? ` (claimed by ${seatName(now.claimedById)})` : "");
    $("#task-current").replaceChildren(...[["Title", now.title], ["Priority", String(now.priority)],
      ["Assigned to", now.assigneeId ? seatName(now.assigneeId) : "nobody"], ["Status", status],
      ["Description", now.description || "none"]].map(([label, value]) => el("li", {}, el("strong", {}, `${label}: `), value)));
  }

  // The manager keeps the task as it is now: the editor goes back to it.
  function discardTaskChanges() {
    const draft = state.taskDraft;
    const t = draft && state.tasks.find((x) => x.id === draft.id);
    if (!t) return;
    const c = state.taskConflict, now = c && c.version > t.version ? c : t;
    Object.assign(draft, taskFields(now), { base: taskFields(now), version: now.version });
    state.taskConflict = null;
    stash(TASK_DRAFT, draft);
    fillTaskEditor(now);
    renderTaskConflict();
    const title = document.querySelector("#task-edit input[name=title]");
    if (title) title.focus();
  }

  async function saveTask() {
    const draft = state.taskDraft;
    if (!draft) return;
    const untitled = blank(draft.title);
    const problem = untitled ? "A task needs a title (spaces do not count)." : descriptionProblem(draft.description);
    formMessage("#task-edit-error", problem);
    if (problem) { $(`#task-edit ${untitled ? "input[name=title]" : "textarea"}`).focus(); return; }
    // What the manager changed since the editor was opened (or since the task changed meanwhile), on that version.
    const t = state.tasks.find((x) => x.id === draft.id), was = draft.base;
    const body = {};
    if (draft.title.trim() !== was.title) body.title = draft.title.trim();
    if (draft.description.trim() !== was.description) body.description = draft.description;  // "" removes it
    if (Number(draft.priority) !== Number(was.priority)) body.priority = Number(draft.priority);
    if (t && t.status === "pending" && !sameValue(draft.assignee, was.assignee)) {
      body.assigneeId = draft.assignee ? Number(draft.assignee) : null;
    }
    state.taskBusy = draft.id;
    try {
      if (Object.keys(body).length) await request("PATCH", `${base}/tasks/${draft.id}`, { ...body, version: draft.version });
      state.taskDraft = null;
      state.taskConflict = null;
      taskDone();
    } catch (err) {
      state.taskBusy = null;
      if (err.code === "stale_version" && err.details && err.details.current) {
        // Changed meanwhile (no event may have told the desk yet): the editor is made on the task as it is now, the
        // manager's changes stay in it, and what it holds now is said under it; saving again applies them.
        const current = err.details.current;
        state.tasks = state.tasks.map((x) => (x.id === current.id ? current : x));
        followTask(draft, current);
        state.taskConflict = taskUntouched(draft) ? null : current;
        renderTaskEditor();
        formMessage("#task-edit-error", "");
        await loadTasks();  // the board too
      } else {
        await loadTasks();
        refused("#task-edit-error", err);  // under the editor while it is open (a task completed meanwhile closes it)
      }
      return;
    } finally {
      state.taskBusy = null;
    }
    await loadTasks();
  }

  // A task made by mistake or no longer wanted goes, once the manager confirms it (a completed one stays: it records work).
  async function deleteTask(t) {
    if (!window.confirm(`Delete the task “${t.title}”? It leaves the board, the agents' work and the report; this cannot be undone.`)) return;
    try {
      await request("DELETE", `${base}/tasks/${t.id}`);
      state.taskDraft = null;
      renderTaskEditor();  // closed at once: its task is gone
      const add = $("#task-title");
      if (add) add.focus();  // the editor and its button are gone: the keyboard goes on from the form
      taskDone();
      toast(`Task deleted: ${t.title}`);
    } catch (err) {
      await loadTasks();
      refused("#task-edit-error", err);  // under the button, while the editor is still open
      return;
    }
    await loadTasks();
  }

  // A task action went through: what the add-task form said before no longer applies.
  function taskDone() { formMessage("#task-form-error", ""); }

  async function onTaskAction(e) {
    const button = e.target.closest("button[data-action]");
    const card = button && button.closest("#board [data-task-id]");
    if (!card) return;
    const t = state.tasks.find((x) => String(x.id) === card.dataset.taskId);
    if (!t) return;
    const action = button.dataset.action;
    if (action === "edit") {
      const open = state.taskDraft && state.taskDraft.id === t.id;
      state.taskDraft = open ? null : { id: t.id, version: t.version, base: taskFields(t), ...taskFields(t) };
      state.taskConflict = null;
      renderTaskEditor();
      const title = document.querySelector("#task-edit input[name=title]");
      if (title) title.focus();
      return;
    }
    if (button.getAttribute("aria-disabled") === "true") { toast(CLAIM_WAITS); return; }
    state.taskBusy = t.id;
    try {
      const moved = (await request("POST", `${base}/tasks/${t.id}/${action}`)).data;
      // The task being edited here moved on by this step, not in another tab: the editor follows it without a word.
      const draft = state.taskDraft;
      if (draft && draft.id === t.id && draft.version === t.version) followTask(draft, moved, true);
      taskDone();
    } catch (err) { failed(err); } finally {
      state.taskBusy = null;
    }
    await loadTasks();
  }

  // The log grows all the time: fetch only what came after the last row shown (the API pages from
  // the oldest), one fetch at a time, and show the newest LOG_ROWS.
  const LOG_ROWS = 200;
  const logView = { filter: null, lastId: 0, rows: [], queue: Promise.resolve() };
  function loadLog() {
    logView.queue = logView.queue.catch(() => {}).then(fetchLog);
    return logView.queue;
  }

  async function fetchLog() {
    const box = $("#invocations");
    if (!box) return;
    const c = $("#log-correlation").value.trim();
    if (logView.filter !== c) Object.assign(logView, { filter: c, lastId: 0, rows: [] });
    for (;;) {
      const query = new URLSearchParams({ afterId: String(logView.lastId), limit: "1000" });
      if (c) query.set("correlationId", c);
      const rows = (await request("GET", `${base}/invocations?${query}`)).data;
      if (rows.length) logView.lastId = rows[rows.length - 1].id;
      logView.rows = logView.rows.concat(rows).slice(-LOG_ROWS);
      if (rows.length < 1000) break;
    }
    const key = JSON.stringify([logView.filter, logView.lastId, logView.rows.length, state.labels]);
    if (box.dataset.key === key) return;  // nothing new (see renderSeats)
    box.dataset.key = key;
    box.replaceChildren(...logView.rows.map((i) => el("li", { "data-component": i.component, "data-invocation-id": i.id },
      el("code", {}, i.component), " ", el("a", { href: "#", class: "correlation", "data-correlation": i.correlationId }, i.correlationId),
      el("span", { class: "muted small who", "data-agent-id": i.agentId || null },
        ` ${[i.user, i.agentId ? agentName(i.agentId) : ""].filter(Boolean).join(" · ")} ${i.success ? "" : "failed"}`))));
  }

  // Sharing (owner and staff): who else may read the workspace, or publish observations in it (sharing.js).
  const sharing = window.ConveneSharing ? window.ConveneSharing.mount({ discussionId: id, noun: "workspace",
    owner: () => (state.room && state.room.owner) || "" }) : { load: async () => {} };

  // Each hit is a link to where it is on the desk (the observation in the list, the task on the board, the round's
  // narrative in the editor); nothing found is said in words.
  async function search(q) {
    const { data } = await request("GET", `${base}/search?q=${encodeURIComponent(q)}`);
    const hit = (kind, id, text) => el("li", { class: "search-hit" },
      el("a", { href: "#", "data-goto": kind, "data-id": id }, text));
    const section = (title, rows, kind, text) => (rows.length ? el("div", {}, el("h3", {}, `${title} (${rows.length})`),
      el("ol", {}, ...rows.map((r) => hit(kind, r.id, text(r))))) : null);
    const found = data.observations.length + data.tasks.length + data.narratives.length;
    $("#search-results").replaceChildren(...(found ? [
      section("Observations", data.observations, "observation", (o) => `${o.type} by ${authorName(o)}, round ${o.round}: ${o.content}`),
      section("Tasks", data.tasks, "task", (t) => `${t.title} (${t.status.replace("_", " ")})`),
      section("Narratives", data.narratives, "narrative", (n) => [`Round ${n.round}: ${n.content.slice(0, 200)}`,
        (n.keyDecisions || []).length ? `Key decisions: ${n.keyDecisions.join("; ")}` : "",
        (n.nextSteps || []).length ? `Next steps: ${n.nextSteps.join("; ")}` : ""].filter(Boolean).join(" · ")),
    ].filter(Boolean) : [el("p", { class: "muted", role: "status" }, `Nothing in this workspace matches “${q}”.`)]));
  }

  // Brings what a search hit names into view and gives it the focus (the keyboard goes on from there).
  function goTo(kind, hitId) {
    let target = null;
    if (kind === "observation") {
      const o = state.observations.find((x) => String(x.id) === hitId);
      if (!o) { toast("That observation is older than the ones shown: use Show older observations."); return; }
      // Filters that hide it are cleared.
      if (!document.querySelector(`#observations [data-observation-id="${hitId}"]`)) {
        for (const sel of ["#filter-type", "#filter-round", "#filter-seat"]) $(sel).value = "";
        $("#filter-open").checked = false;
        renderObservations();
      }
      target = document.querySelector(`#observations [data-observation-id="${hitId}"]`);
    } else if (kind === "task") {
      target = document.querySelector(`#board [data-task-id="${hitId}"]`);
      if (!target) { toast("That task is no longer on the board."); return; }
    } else if (kind === "narrative") {
      if (!state.narratives.some((n) => String(n.id) === hitId)) return;
      $("#narrative-round").value = hitId;
      renderNarrative(true);
      target = $("#narrative-round");
    }
    if (!target) return;
    if (!target.matches("select, a, button, input, textarea")) target.tabIndex = -1;
    target.classList.add("found");
    setTimeout(() => target.classList.remove("found"), 2500);
    target.scrollIntoView({ block: "center" });
    target.focus({ preventScroll: true });
  }

  // Complete and Archive cannot be undone: the manager confirms them first.
  function confirmClose(verb) {
    const dialog = $("#close-dialog");
    const label = verb === "complete" ? "Complete" : "Archive";
    if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(window.confirm(`${label} this workspace for good?`));
    $("#close-title").textContent = `${label} this workspace?`;
    $("#close-text").textContent = $("#close-text").dataset[verb];
    $("#close-confirm").textContent = `${label} workspace`;
    // Closing makes the narratives read-only: changes in the editor not saved yet would be lost, so the dialog says so.
    const unsaved = state.editing && !editorUntouched() && state.narratives.find((x) => x.id === state.editing.id);
    Object.assign($("#close-unsaved"), { hidden: !unsaved, textContent: unsaved
      ? `Your changes to round ${unsaved.round}'s narrative are not saved, and once it is closed nobody can save them: `
        + `keep it open, save them, then ${verb} it.` : "" });
    return new Promise((resolve) => {
      dialog.returnValue = "";
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
      dialog.showModal();
    });
  }

  async function control(verb) {
    if ((verb === "complete" || verb === "archive") && !(await confirmClose(verb))) return;
    try {
      const path = verb === "end" ? `${base}/rounds/end` : `${base}/${verb}`;
      await request("POST", path);
    } catch (err) {
      failed(err);
      if (err.code === "budget_exceeded") Object.assign($("#budget-refused"), { textContent: err.message, hidden: false });
    }
    await refreshAll();
  }

  // Everything the desk shows, read again (once it opened, after each control, and polled while the socket is down).
  async function readAll() {
    await loadRoom();
    await Promise.all([loadObservations(), loadNarratives(), loadTasks(), loadLog(), loadRounds()]);
  }

  async function refreshAll() {
    try {
      await readAll();
      poller.touched();
    } catch (err) { fail(err); }
  }

  // Without the live connection the desk reads everything every few seconds and says so, as the room page
  // does (live.js: OfflinePoller, connectionLabel); back online, the join replays what was missed.
  const { OfflinePoller, connectionLabel } = window.ConveneLive;
  const poller = new OfflinePoller(readAll, {
    onChange: showConnection,
    onError: (err) => {
      if (err && (err.status === 403 || err.status === 404)) {
        poller.stop();
        fail({ message: "This workspace is not found, or you may no longer view it." });
      }
    },
  });

  function showConnection() {
    const c = $("#connection");
    c.dataset.state = poller.polling ? "polling" : poller.state;
    c.querySelector(".label").textContent = connectionLabel(poller.state, poller.polling, poller.lastUpdate);
  }

  // Why the workspace paused itself for being idle: the room says it while it is paused for that
  // (`idlePause`: what fired, `time` or `rounds`, with the limit reached), to everyone who may view it.
  function showIdleWhy(p) {
    const triggers = (p && p.triggers) || [];
    const seconds = (p && p.idleSeconds) || page.idlePauseSeconds;
    const rounds = (p && p.idleRounds) || page.idleRounds;
    const ended = rounds === 1 ? "a round had ended by itself" : `${rounds} rounds in a row had ended by themselves`;
    const byTime = triggers.includes("time"), byRounds = triggers.includes("rounds");
    const text = byTime && byRounds ? `nobody had done anything in it for ${duration(seconds)}, and ${ended} since somebody last did`
      : byTime ? `nobody had done anything in it for ${duration(seconds)}`
        : byRounds ? `${ended} since somebody last did anything in it` : "";
    $("#idle-why").hidden = !!text;
    Object.assign($("#idle-why-known"), { textContent: text, hidden: !text });
  }

  function wire() {
    const typeFilter = $("#filter-type");
    typeFilter.append(...TYPES.map((t) => el("option", { value: t }, t)));
    const obsType = $("#obs-type");
    if (obsType) obsType.append(...TYPES.map((t) => el("option", { value: t }, t)));
    for (const sel of ["#filter-type", "#filter-round", "#filter-seat", "#filter-open"]) $(sel).addEventListener("change", renderObservations);
    $("#narrative-round").addEventListener("change", () => renderNarrative(true));
    $("#btn-older-observations").addEventListener("click", () => { loadOlderObservations().catch(fail); });
    $("#btn-new-observations").addEventListener("click", showUnseen);
    document.querySelectorAll("[data-verb]").forEach((b) => b.addEventListener("click", () => control(b.dataset.verb)));
    const end = $("#btn-end-round");
    if (end) end.addEventListener("click", () => control("end"));
    const pacing = $("#pacing-form");
    if (pacing) {
      if (BUDGET_USD_LIMIT != null) $("#budget-usd").max = String(BUDGET_USD_LIMIT);  // the browser says it before sending
      if (BUDGET_TOKENS_LIMIT != null) $("#budget-tokens").max = String(BUDGET_TOKENS_LIMIT);
      $("#btn-pacing").addEventListener("click", () => (pacing.hidden ? openPacing() : closePacing()));
      $("#btn-pacing-cancel").addEventListener("click", closePacing);
      pacing.addEventListener("submit", savePacing);
      for (const box of ["#budget-tokens", "#budget-usd"]) $(box).addEventListener("input", renderBudgetWarning);
    }
    const save = $("#btn-save-narrative");
    if (save) {
      save.addEventListener("click", saveNarrative);
      $("#narrative-content").addEventListener("input", renderNarrativeLength);
      for (const box of Object.values(editorFields())) box.addEventListener("input", keepDraft);
      $("#btn-discard-draft").addEventListener("click", discardDraft);
      $("#btn-keep-current").addEventListener("click", discardDraft);
    }
    const form = $("#observation-form");
    if (form) form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const problem = blank($("#obs-content").value) ? "Write the observation's text first (spaces do not count)." : "";
      formMessage("#observation-error", problem);
      if (problem) { $("#obs-content").focus(); return; }
      const body = { type: $("#obs-type").value, content: $("#obs-content").value };
      if (state.replyTo) body.respondingToId = state.replyTo.id;
      try {
        await request("POST", `${base}/observations`, body);
        $("#obs-content").value = "";
        replyTo(null);
      } catch (err) { refused("#observation-error", err); }
    });
    $("#observations").addEventListener("click", (e) => {
      const button = e.target.closest("button[data-action=reply]");
      if (!button) return;
      const id = Number(button.closest("[data-observation-id]").dataset.observationId);
      replyTo(state.observations.find((o) => o.id === id) || null);
    });
    const cancelReply = $("#btn-cancel-reply");
    if (cancelReply) cancelReply.addEventListener("click", () => { replyTo(null); $("#obs-content").focus(); });
    $("#board").addEventListener("click", (e) => { onTaskAction(e).catch(fail); });
    const taskForm = $("#task-form");
    if (taskForm) taskForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      const untitled = blank($("#task-title").value);
      const problem = untitled ? "A task needs a title (spaces do not count)." : descriptionProblem($("#task-description").value);
      formMessage("#task-form-error", problem);
      if (problem) { $(untitled ? "#task-title" : "#task-description").focus(); return; }
      const assignee = $("#task-assignee").value;
      try {
        const description = $("#task-description").value;
        await request("POST", `${base}/tasks`, { title: $("#task-title").value, priority: Number($("#task-priority").value),
          assigneeId: assignee ? Number(assignee) : null, ...(blank(description) ? {} : { description }) });
        taskForm.reset();  // the next task starts from the defaults: no title, priority 3, nobody
        stash(TASK_FORM, null);
        renderTaskDescriptionLength();
        taskDone();
      } catch (err) { refused("#task-form-error", err); }
      await loadTasks();
    });
    if (taskForm) $("#task-title").addEventListener("input", () => { if (!blank($("#task-title").value)) taskDone(); });
    if (taskForm) $("#task-description").addEventListener("input", renderTaskDescriptionLength);
    if (taskForm) for (const kind of ["input", "change"]) taskForm.addEventListener(kind, keepTaskForm);
    $("#search-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const q = $("#search-q").value.trim();
      if (q) search(q).catch(failed);
      else { $("#search-results").replaceChildren(el("p", { class: "muted", role: "status" }, "Type what to look for first.")); $("#search-q").focus(); }
    });
    $("#search-results").addEventListener("click", (e) => {
      const a = e.target.closest("a[data-goto]");
      if (!a) return;
      e.preventDefault();
      goTo(a.dataset.goto, a.dataset.id);
    });
    const log = $("#log-correlation");
    if (log) log.addEventListener("change", () => loadLog().catch(fail));
    const logList = $("#invocations");
    if (logList) logList.addEventListener("click", (e) => {
      const a = e.target.closest("a.correlation");
      if (!a) return;
      e.preventDefault();
      log.value = a.dataset.correlation;
      loadLog().catch(fail);
    });
  }

  const E = window.ConveneLive.EVENTS;
  const refreshers = {
    [E.OBSERVATION]: loadObservations,
    [E.NARRATIVE]: () => Promise.all([loadNarratives(), loadRoom()]),  // the room: what the round spent
    [E.TASK]: loadTasks,
    [E.ROUND]: () => Promise.all([loadRoom(), loadRounds()]),  // an ended round's narrative is on its way
    [E.STATUS]: loadRoom,
    [E.PARTICIPANT]: loadRoom,
  };
  let pending = new Set();
  let timer = null;
  function onEvent(event) {
    const fn = refreshers[event.type];
    if (!fn) return;
    pending.add(fn);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const fns = [...pending];
      pending = new Set();
      Promise.all(fns.map((f) => f())).then(() => loadLog()).catch(fail);
    }, 150);
  }

  async function init() {
    wire();
    try { state.personas = (await request("GET", "personas?pageSize=100")).data.filter((p) => !p.isFacilitator); } catch (err) { state.personas = []; }
    try { state.roles = (await request("GET", "roles?pageSize=100")).data; } catch (err) { state.roles = []; }
    if (page.canControl) state.taskDraft = stashed(TASK_DRAFT);  // opened again by loadTasks while its task can be edited
    await refreshAll();
    if (page.canControl) restoreTaskForm();
    sharing.load();
    const live = new window.ConveneLive.LiveDiscussion(id, {
      onEvent,
      onConnection: (s, detail) => { $("#connection").title = detail ? String(detail) : ""; poller.connection(s); },
      onRefused: (ack) => { poller.stop(); fail({ message: ack.error }); },
      // Shared or unshared meanwhile: the desk is drawn for an access (the observation form or not), so it is drawn again.
      onAccess: (access) => {
        if ((access === "participant") === Boolean(page.canParticipate)) return;
        toast(access === "participant" ? "You may now publish observations here" : "You may now only read this workspace");
        setTimeout(() => window.location.reload(), 1200);
      },
    });
    window.ConveneDesk = { live, state, poller };
    if (typeof window.io !== "function") {  // static/vendor/ is filled by `npm --prefix frontend ci`
      fail({ message: "Live updates are unavailable: the Socket.IO client bundle is missing on the server." });
      poller.connection("error");
      return;
    }
    live.connect();
    if (!live.socket.connected) poller.connection("connecting");
  }
  init();
})();
