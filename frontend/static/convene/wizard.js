// The three-step creation wizard: topic & format; facilitator & participants; rounds, estimate, start.
(function () {
  "use strict";
  const { request, listAll, el, toast, pageData, errorText, budgetLimits, agentLabels, ownAgentNamed, duration: spanOfTime } = window.Convene;
  const page = pageData();
  const $ = (sel) => document.querySelector(sel);
  const form = $("#wizard");

  const ROLE_OPTIONS = [["participant", "Participant"], ["devil_advocate", "Devil's advocate"], ["observer", "Observer"]];
  // Every agent of a workspace publishes observations each round, so the server seats none whose own role is
  // one of these (rooms.models.Seat.NOT_WORK_ROLES, by the role's key), and the wizard offers no facilitator.
  const NOT_WORK_ROLES = ["facilitator", "observer"];
  const OFFLINE_PROVIDERS = new Set(["rehearsal", "scripted"]);
  // Rough per-call sizes (tokens) and durations (seconds) for the estimate.
  const CALLS = {
    opening: { input: 1400, output: 200, seconds: 5 },
    evaluation: { input: 2200, output: 220, seconds: 5 },
    participant: { input: 2000, output: 450, seconds: 12 },
    synthesis: { input: 3200, output: 700, seconds: 15 },
  };
  const OFFLINE_SECONDS = 0.5;
  const KIND_OF_CALL = { opening: "facilitator", evaluation: "facilitator", synthesis: "facilitator", participant: "participant" };

  // Seconds one call takes: measured on this server (median of recent calls of that provider),
  // the demo's pacing for the offline model, or a rough default.
  function secondsOf(kind, m) {
    const measured = ((page.latency || {})[m.provider] || {})[KIND_OF_CALL[kind]];
    const pace = m.provider === "rehearsal" ? Number(page.rehearsalPace || 0) : 0;
    if (measured && measured.calls >= 3) return { seconds: Math.max(measured.seconds, pace), measured };
    if (m.offline) return { seconds: Math.max(OFFLINE_SECONDS, pace), measured: null };
    return { seconds: CALLS[kind].seconds, measured: null };
  }

  let step = 1;
  let agents = [];
  let labels = {};  // agent id -> its name, with its alias and owner where another agent has the same name

  function labelOf(agent) {
    return labels[agent.id] || agent.name;
  }

  // --- steps -------------------------------------------------------------------------
  // Each step is a history entry: the browser's Back goes to the previous step, not away.
  function goTo(n) {
    if (n === step) return;
    history.pushState({ wizardStep: n }, "", `#step-${n}`);
    showStep(n);
  }

  function showStep(n) {
    step = n;
    for (const fs of form.querySelectorAll("fieldset.step")) fs.hidden = Number(fs.dataset.step) !== n;
    for (const li of form.querySelectorAll(".steps li")) {
      const k = Number(li.dataset.step);
      if (k === n) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
      li.classList.toggle("done", k < n);
    }
    $("#wizard-back").hidden = n === 1;
    $("#wizard-next").hidden = n === 3;
    $("#wizard-start").hidden = n !== 3;
    $("#wizard-draft").hidden = n !== 3;
    $("#wizard-error").hidden = true;
    if (n === 3) { showKind(); renderEstimate(); renderReview(); }
    const legend = form.querySelector(`fieldset.step[data-step="${n}"] legend`);
    if (legend) { legend.tabIndex = -1; legend.focus(); }
  }

  function kind() {
    return form.querySelector('input[name="kind"]:checked').value;
  }

  // A workspace has no format, turn limit or estimate: its rounds end by the clock, the count or the manager.
  function showKind() {
    const workspace = kind() === "workspace";
    $("#format-choice").hidden = workspace;
    $("#workspace-rounds").hidden = !workspace;
    $("#discussion-rounds").hidden = workspace;
    $("#estimate-section").hidden = workspace;
    $("#wizard-start").textContent = workspace ? "Start workspace" : "Start discussion";
    $("#wizard-title").textContent = workspace ? "New workspace" : "New discussion";
    document.title = `${workspace ? "New workspace" : "New discussion"} · Convene`;
    const idle = page.idlePauseSeconds;
    $("#ws-idle-note").hidden = !idle;
    if (idle) $("#ws-idle").textContent = spanOfTime(idle);
    $("#ws-idle-rounds-note").hidden = !page.idleRounds;
    $("#ws-idle-rounds").textContent = page.idleRounds;
  }

  // A workspace's round pacing ({maxEvents, maxSeconds}) from its two fields, or false (the error shown).
  function pacing() {
    const [minEvents, maxEvents] = (page.roundPolicyLimits || {}).maxEvents || [1, 1000];
    const [minSeconds, maxSeconds] = (page.roundPolicyLimits || {}).maxSeconds || [5, 86400];
    const events = Number($("#ws-events").value);
    const seconds = Math.round(Number($("#ws-minutes").value) * 60);
    let msg = "";
    if (!Number.isInteger(events) || events < minEvents || events > maxEvents) msg = `Observations per round: a whole number from ${minEvents} to ${maxEvents}.`;
    else if (!$("#ws-minutes").value || !(seconds >= minSeconds && seconds <= maxSeconds)) msg = `Minutes per round: from ${minSeconds / 60 < 1 ? `${minSeconds} seconds` : spanOfTime(minSeconds)} to ${spanOfTime(maxSeconds)}.`;
    fieldError("ws-error", msg);
    return msg ? false : { maxEvents: events, maxSeconds: seconds };
  }

  // The optional budget: {budgetTokens?, budgetUsd?}, or false (the error shown).
  function budget() {
    const out = {};
    const tokens = $("#budget-tokens").value.trim();
    const usd = $("#budget-usd").value.trim();
    let msg = "";
    if (tokens && !(Number.isInteger(Number(tokens)) && Number(tokens) >= 1)) msg = "Tokens: a whole number of at least 1, or empty.";
    else if (usd && !(Number(usd) >= 0 && Number(usd) <= 999999.99)) msg = "US dollars: from 0 to 999,999.99, or empty.";
    fieldError("budget-error", msg);
    if (msg) return false;
    if (tokens) out.budgetTokens = Number(tokens);
    if (usd) out.budgetUsd = Number(usd);
    return out;
  }

  function fieldError(id, message) {
    const node = $(`#${id}`);
    node.textContent = message || "";
    node.hidden = !message;
    return !message;
  }

  function validate(n) {
    if (n === 1) {
      const topic = $("#topic").value.trim();
      const limit = page.topicLimit || 10000;
      const ok = fieldError("topic-error", !topic ? "Write the topic the room should discuss."
        : topic.length > limit ? `The topic is ${topic.length.toLocaleString("en")} characters long; at most ${limit.toLocaleString("en")} fit.` : "");
      if (!ok) $("#topic").focus();
      $("#topic").setAttribute("aria-invalid", String(!ok));
      return ok;
    }
    if (n === 2) {
      let ok = fieldError("moderator-error", $("#moderator").value ? "" : "Choose a facilitator.");
      const chosen = participants();
      let msg = "";
      if (!chosen.length) msg = "Add at least one participant.";
      else if (!chosen.some((p) => p.role !== "observer")) msg = "At least one must speak: a participant or a devil's advocate. Observers never speak.";
      else if (chosen.some((p) => String(p.agentId) === $("#moderator").value)) msg = "The facilitator cannot also be a participant.";
      ok = fieldError("participants-error", msg) && ok;
      return ok;
    }
    if (n === 3) {
      const paced = kind() !== "workspace" || pacing() !== false;
      return (kind() === "workspace" || validRounds() !== false) && paced && budget() !== false;
    }
    return true;
  }

  function validRounds() {
    if (roundsMode() === "auto") return fieldError("rounds-error", "") && null;
    const value = Number($("#max-rounds").value);
    const limit = page.maxRoundsLimit || 20;
    const ok = Number.isInteger(value) && value >= 1 && value <= limit;
    fieldError("rounds-error", ok ? "" : `Choose a whole number from 1 to ${limit}.`);
    $("#max-rounds").setAttribute("aria-invalid", String(!ok));
    return ok ? value : false;
  }

  function roundsMode() {
    return form.querySelector('input[name="rounds-mode"]:checked').value;
  }

  function effectiveRounds() {
    const fixed = validRounds();
    return typeof fixed === "number" ? fixed : page.defaultMaxRounds || 5;
  }

  // --- agents --------------------------------------------------------------------------
  function agentById(id) {
    return agents.find((a) => String(a.id) === String(id));
  }

  function fillModerators(selectId) {
    const select = $("#moderator");
    const previous = selectId ?? select.value;
    const facilitators = agents.filter((a) => a.isFacilitator);
    const builtins = facilitators.filter((a) => a.isBuiltin);
    const custom = facilitators.filter((a) => !a.isBuiltin);
    select.replaceChildren(el("option", { value: "" }, "Choose a facilitator…"));
    const option = (a) => el("option", { value: a.id }, labelOf(a));
    if (builtins.length) select.append(el("optgroup", { label: "Built-in presets" }, builtins.map(option)));
    if (custom.length) select.append(el("optgroup", { label: "Your facilitators" }, custom.map(option)));
    if (previous && agentById(previous)) select.value = String(previous);
    describeModerator();
  }

  function describeModerator() {
    const agent = agentById($("#moderator").value);
    $("#moderator-help").textContent = agent ? (agent.description || "") : "Built-in presets are moderation styles; you can also create your own.";
    syncParticipantRows();
  }

  function participantRow(agent) {
    const boxId = `p-${agent.id}`;
    const roleId = `r-${agent.id}`;
    const row = el("div", { class: "prow", "data-agent-id": agent.id },
      el("input", { type: "checkbox", id: boxId, value: agent.id, class: "p-check" }),
      el("label", { for: boxId, class: "p-label" }, el("span", { class: "name" }, labelOf(agent)),
        el("span", { class: "muted small" }, agent.description || (agent.role && agent.role.name) || "")),
      el("label", { for: roleId, class: "visually-hidden" }, `Role of ${labelOf(agent)}`),
      el("select", { id: roleId, class: "p-role", disabled: true }, ROLE_OPTIONS.map(([v, label]) => el("option", { value: v }, label))),
      el("span", { class: "p-note muted small", hidden: true }, "Chosen as facilitator"));
    row.querySelector(".p-check").addEventListener("change", () => {
      syncParticipantRows();
      fieldError("participants-error", "");
      if (step === 3) renderEstimate();
    });
    row.querySelector(".p-role").addEventListener("change", () => { if (step === 3) renderEstimate(); });
    return row;
  }

  // Can the agent work in a workspace? Not a facilitator, nor an agent whose own role is one no workspace
  // agent works in.
  function works(agent) {
    return !agent.isFacilitator && !(agent.role && NOT_WORK_ROLES.includes(agent.role.key));
  }

  // The participants to tick, for the kind of room chosen on step 1 (what was ticked stays ticked).
  function fillParticipants() {
    const box = $("#participants");
    const ticked = new Map(participants().map((p) => [String(p.agentId), p.role]));
    const workspace = kind() === "workspace";
    const offered = workspace ? agents.filter(works) : agents;
    const others = offered.filter((a) => !a.isFacilitator);
    const facilitators = offered.filter((a) => a.isFacilitator);
    box.replaceChildren();
    if (!others.length) box.append(el("p", { class: "muted" }, "No assistants yet."));
    box.append(...others.map(participantRow));
    if (facilitators.length) {
      box.append(el("details", { class: "more-agents" }, el("summary", {}, `Facilitators as participants (${facilitators.length})`),
        ...facilitators.map(participantRow)));
    }
    const idle = workspace ? agents.filter((a) => !a.isFacilitator && !works(a)) : [];
    if (workspace) {
      box.append(el("p", { class: "help", id: "not-working" }, "In a workspace every assistant publishes observations each round, "
        + "so facilitators are not offered here"
        + (idle.length ? `, nor ${idle.map((a) => `${labelOf(a)} (${a.role.name})`).join(", ")}, whose role does not publish.` : ".")));
    }
    for (const row of box.querySelectorAll(".prow")) {
      if (!ticked.has(row.dataset.agentId)) continue;
      row.querySelector(".p-check").checked = true;
      row.querySelector(".p-role").value = ticked.get(row.dataset.agentId);
    }
    syncParticipantRows();
  }

  // The facilitator cannot also be a participant: its row is disabled and unticked.
  function syncParticipantRows() {
    const moderatorId = $("#moderator").value;
    for (const row of form.querySelectorAll(".prow")) {
      const check = row.querySelector(".p-check");
      const isModerator = moderatorId && row.dataset.agentId === moderatorId;
      if (isModerator) check.checked = false;
      check.disabled = Boolean(isModerator);
      row.classList.toggle("is-moderator", Boolean(isModerator));
      row.querySelector(".p-note").hidden = !isModerator;
      row.querySelector(".p-role").disabled = !check.checked;
      row.classList.toggle("selected", check.checked);
    }
  }

  function participants() {
    return [...form.querySelectorAll(".prow")]
      .filter((row) => row.querySelector(".p-check").checked)
      .map((row) => ({ agentId: Number(row.dataset.agentId), role: row.querySelector(".p-role").value }));
  }

  async function loadAgents(selectId) {
    try {
      agents = await listAll("agents");
      labels = agentLabels(agents);
      fillModerators(selectId);
      fillParticipants();
    } catch (err) {
      $("#participants").replaceChildren(el("p", { class: "error" }, `Could not load assistants: ${err.message}`));
    }
  }

  // --- the inline "New facilitator" ------------------------------------------------------
  function toggleNewFacilitator(open) {
    const box = $("#new-facilitator");
    box.hidden = !open;
    $("#new-facilitator-toggle").setAttribute("aria-expanded", String(open));
    if (open) $("#nf-name").focus(); else $("#new-facilitator-toggle").focus();
  }

  async function createFacilitator() {
    const name = $("#nf-name").value.trim();
    const description = $("#nf-description").value.trim();
    if (!name) { fieldError("nf-error", "Give the facilitator a name."); $("#nf-name").focus(); return; }
    const namesake = ownAgentNamed(agents, name);
    if (namesake) {
      fieldError("nf-error", `You already have an assistant named "${namesake.name}"${namesake.alias ? ` (@${namesake.alias})` : ""}. `
        + "Give this one another name, so the two can be told apart where one is chosen.");
      $("#nf-name").focus();
      return;
    }
    fieldError("nf-error", "");
    try {
      // A facilitator made here gets the generic facilitation persona (its moderator prompt).
      const body = { name, description, isFacilitator: true };
      try {
        const generic = (await listAll("personas")).find((p) => p.key === "generic-facilitator");
        if (generic) body.personaId = generic.id;
      } catch (err) { /* without it the engine uses its own generic prompt */ }
      const { data } = await request("POST", "agents", body);
      toast(`Facilitator "${data.name}" created`);
      $("#nf-name").value = "";
      $("#nf-description").value = "";
      toggleNewFacilitator(false);
      await loadAgents(data.id);
      $("#moderator").value = String(data.id);
      describeModerator();
    } catch (err) {
      fieldError("nf-error", errorText(err, { name: "Name", description: "Description" }));
    }
  }

  // --- estimate and review ---------------------------------------------------------------
  function priceOf(model) {
    const prices = page.prices || {};
    if (prices[model]) return prices[model];
    const key = Object.keys(prices).find((k) => model && model.startsWith(k));
    return key ? prices[key] : null;
  }

  function modelOf(agent) {
    const provider = (agent && agent.provider) || page.defaultProvider || "rehearsal";
    if (OFFLINE_PROVIDERS.has(provider)) return { provider, model: provider, offline: true };
    let model = (agent && agent.model) || page.defaultModel || "";
    if (page.modelTiers && page.modelTiers[model]) model = page.modelTiers[model];
    return { provider, model, offline: false };
  }

  function callCost(kind, agent) {
    const size = CALLS[kind];
    const m = modelOf(agent);
    const price = m.offline ? { input: 0, output: 0 } : priceOf(m.model);
    const usd = price ? (size.input * price.input + size.output * price.output) / 1e6 : null;
    const time = secondsOf(kind, m);
    return { tokens: size.input + size.output, usd, seconds: time.seconds, measured: time.measured, provider: m.provider,
      kind: KIND_OF_CALL[kind], offline: m.offline, model: m.model };
  }

  function estimate() {
    const rounds = effectiveRounds();
    const moderator = agentById($("#moderator").value);
    const speakers = participants().filter((p) => p.role !== "observer").map((p) => agentById(p.agentId)).filter(Boolean);
    if (!speakers.length) return null;
    const calls = [callCost("opening", moderator), callCost("synthesis", moderator)];
    for (let r = 0; r < rounds; r += 1) {
      calls.push(callCost("participant", speakers[r % speakers.length]));
      calls.push(callCost("evaluation", moderator));
    }
    const tokens = calls.reduce((s, c) => s + c.tokens, 0);
    const unknown = calls.some((c) => c.usd === null);
    const usd = calls.reduce((s, c) => s + (c.usd || 0), 0);
    const seconds = calls.reduce((s, c) => s + c.seconds, 0);
    const offline = calls.every((c) => c.offline);
    const models = [...new Set(calls.map((c) => c.model || "default"))];
    const basis = [...new Map(calls.map((c) => [`${c.provider} ${c.kind}`, c])).values()].map((c) => (c.measured
      ? `${c.provider} ${c.kind}: measured, about ${c.measured.seconds} s per call (median of ${c.measured.calls} recent calls)`
      : `${c.provider} ${c.kind}: not measured yet, assumed ${c.seconds} s per call`));
    if (Number(page.rehearsalPace || 0) > 0 && calls.some((c) => c.provider === "rehearsal")) {
      basis.push(`the demo paces the offline model at ${page.rehearsalPace} s per answer`);
    }
    return { rounds, calls: calls.length, tokens, usd, unknown, seconds, offline, models, basis };
  }

  function duration(seconds) {
    if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s`;
    return `about ${Math.round(seconds / 60)} min`;
  }

  function renderEstimate() {
    const box = $("#estimate");
    const e = estimate();
    if (!e) { box.replaceChildren(el("dt", {}, "Estimate"), el("dd", {}, "Add a speaking participant first.")); return; }
    const cost = e.offline ? "$0 (offline rehearsal)" : `≈ $${e.usd.toFixed(e.usd < 0.1 ? 3 : 2)}${e.unknown ? " + unpriced models" : ""}`;
    box.replaceChildren(
      el("dt", {}, "Rounds"), el("dd", {}, roundsMode() === "auto" ? `up to ${e.rounds} turns (Auto)` : `up to ${e.rounds} turns (Fixed limit)`),
      el("dt", {}, "Model calls"), el("dd", {}, `up to ${e.calls}`),
      el("dt", {}, "Tokens"), el("dd", {}, `≈ ${e.tokens.toLocaleString()}`),
      el("dt", {}, "Cost"), el("dd", { id: "estimate-cost" }, cost),
      el("dt", {}, "Time"), el("dd", { id: "estimate-time" }, duration(e.seconds)),
      el("dt", {}, "Models"), el("dd", {}, e.models.join(", ")));
    $("#estimate-basis").textContent = `Time is based on ${e.basis.join("; ")}. The facilitator may finish earlier.`;
  }

  function renderReview() {
    const moderator = agentById($("#moderator").value);
    const people = participants().map((p) => {
      const a = agentById(p.agentId);
      return `${a ? labelOf(a) : p.agentId} (${ROLE_OPTIONS.find(([v]) => v === p.role)[1]})`;
    });
    const workspace = kind() === "workspace";
    const caps = budgetLimits(budget() || {});
    const paced = workspace ? pacing() : null;
    $("#review").replaceChildren(
      el("dt", {}, "Kind"), el("dd", {}, kind()),
      el("dt", {}, "Topic"), el("dd", { class: "review-topic" }, window.ConveneMarkdown.markdownNode($("#topic").value.trim())),
      ...(workspace ? [] : [el("dt", {}, "Format"), el("dd", {}, form.querySelector('input[name="format"]:checked').value)]),
      el("dt", {}, "Facilitator"), el("dd", {}, moderator ? labelOf(moderator) : "—"),
      el("dt", {}, "Participants"), el("dd", {}, people.join(", ") || "—"),
      ...(paced ? [el("dt", {}, "Rounds"), el("dd", {}, `end after ${paced.maxEvents} observations or ${spanOfTime(paced.maxSeconds)}`)] : []),
      el("dt", {}, "Budget"), el("dd", { id: "review-budget" }, caps || "no limit"));
  }

  // --- submit ----------------------------------------------------------------------------
  function payload() {
    const topic = $("#topic").value.trim();
    const name = $("#name").value.trim() || window.Convene.shortName(topic);
    const body = {
      name, topic,
      format: form.querySelector('input[name="format"]:checked').value,
      moderatorId: Number($("#moderator").value),
      participants: participants(),
      ...budget(),
    };
    if (kind() === "workspace") return { ...body, kind: "workspace", turnPolicy: pacing() };
    const fixed = validRounds();
    if (typeof fixed === "number") body.maxRounds = fixed; // Auto omits it: the server default applies
    return body;
  }

  // The fields of the body in the wizard's words, for what the server says is wrong with them.
  const FIELD_WORDS = { name: "Name", topic: "Topic", format: "Format", kind: "Kind of room", moderatorId: "Facilitator",
    participants: "Participants", maxRounds: "Maximum rounds", budgetTokens: "Budget in tokens", budgetUsd: "Budget in US dollars",
    turnPolicy: "Rounds", "turnPolicy.maxEvents": "Observations per round", "turnPolicy.maxSeconds": "Minutes per round" };
  const SEAT_FIELD = /^participants\[(\d+)\]/;

  // A refusal of the server in words: a participant's field is that participant, by its name as the list
  // shows it ("participants[1].agentId" is the second one ticked); the other fields by their labels.
  function refusal(err, body) {
    return errorText(err, (field, text) => {
      const seat = SEAT_FIELD.exec(field);
      if (!seat) return FIELD_WORDS[field] ? `${FIELD_WORDS[field]}: ${text}` : text;
      const chosen = (body.participants || [])[Number(seat[1])];
      const agent = chosen && agentById(chosen.agentId);
      if (!agent) return text;
      return text.includes(agent.name) ? text.replace(agent.name, labelOf(agent)) : `${labelOf(agent)}: ${text}`;
    });
  }

  // A draft this page saved whose start then failed: Start tries to start it again and Save as draft opens it;
  // nothing is saved twice.
  let savedId = null;

  async function submit(start) {
    for (const n of [1, 2, 3]) {
      if (!validate(n)) { goTo(n); return; }
    }
    const buttons = [$("#wizard-start"), $("#wizard-draft")];
    buttons.forEach((b) => { b.disabled = true; });
    const error = $("#wizard-error");
    error.hidden = true;
    const body = payload();
    try {
      if (savedId === null) savedId = (await request("POST", "discussions", body)).data.id;
      if (start) await request("POST", `discussions/${savedId}/start`);
      window.location.assign(`/discussions/${savedId}/`);
    } catch (err) {
      buttons.forEach((b) => { b.disabled = false; });
      if (savedId !== null) {
        // The room page cannot change a draft's topic, facilitator or participants: the draft is as it was sent.
        error.textContent = `Saved as a draft, but it could not start: ${refusal(err, body)} Start tries again with `
          + "the draft as it was saved, and Save as draft opens it; what is changed on this page now is not saved.";
        error.hidden = false;
        return;
      }
      // What is wrong with the participants is put right on step 2: said there, under the list.
      if (Object.keys(err.details || {}).some((field) => field.startsWith("participants"))) {
        goTo(2);
        fieldError("participants-error", refusal(err, body));
        return;
      }
      error.textContent = refusal(err, body);
      error.hidden = false;
    }
  }

  // --- wiring ----------------------------------------------------------------------------
  $("#default-rounds").textContent = page.defaultMaxRounds || 5;
  const policy = page.roundPolicy || { maxEvents: 10, maxSeconds: 300 };
  $("#ws-events").value = policy.maxEvents;
  $("#ws-minutes").value = Math.round((policy.maxSeconds / 60) * 100) / 100;
  for (const radio of form.querySelectorAll('input[name="kind"]')) {
    radio.addEventListener("change", () => { showKind(); fillParticipants(); });
  }
  for (const id of ["ws-events", "ws-minutes", "budget-tokens", "budget-usd"]) {
    $(`#${id}`).addEventListener("input", () => { if (step === 3) renderReview(); });
  }
  $("#wizard-next").addEventListener("click", () => { if (validate(step)) goTo(step + 1); });
  $("#wizard-back").addEventListener("click", () => history.back());
  window.addEventListener("popstate", (e) => {
    const wanted = (e.state && e.state.wizardStep) || 1;
    // Steps before the one asked for must be valid (e.g. Forward after editing the topic).
    let n = 1;
    while (n < wanted && validate(n)) n += 1;
    showStep(n);
  });
  $("#wizard-start").addEventListener("click", () => submit(true));
  $("#wizard-draft").addEventListener("click", () => submit(false));
  $("#moderator").addEventListener("change", () => { fieldError("moderator-error", ""); describeModerator(); });
  $("#topic").addEventListener("input", () => { fieldError("topic-error", ""); $("#topic").removeAttribute("aria-invalid"); });
  $("#new-facilitator-toggle").addEventListener("click", () => toggleNewFacilitator($("#new-facilitator").hidden));
  $("#nf-cancel").addEventListener("click", () => toggleNewFacilitator(false));
  $("#nf-create").addEventListener("click", createFacilitator);
  $("#new-facilitator").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.tagName === "INPUT") { e.preventDefault(); createFacilitator(); }
    if (e.key === "Escape") toggleNewFacilitator(false);
  });
  for (const radio of form.querySelectorAll('input[name="rounds-mode"]')) {
    radio.addEventListener("change", () => {
      $("#max-rounds").disabled = roundsMode() === "auto";
      renderEstimate();
    });
  }
  $("#max-rounds").addEventListener("input", renderEstimate);
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.tagName === "INPUT" && e.target.type !== "checkbox" && e.target.closest("fieldset.step")) {
      e.preventDefault();
      if (step < 3) $("#wizard-next").click();
    }
  });

  // The Agents page (Make a new agent opens it in another tab) says when it changed an agent: the list is read
  // again, with what was ticked kept.
  if ("BroadcastChannel" in window) new BroadcastChannel("convene-agents").addEventListener("message", () => loadAgents());

  history.replaceState({ wizardStep: 1 }, "", window.location.pathname);
  step = 0;
  showStep(1);
  showKind();
  $("#topic").focus();
  loadAgents();
})();
