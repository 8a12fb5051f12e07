// The agents page: the participant agents you may use (built-ins badged and read-only, your own editable and
// deletable) and a form that creates or edits one: name, alias (made from the name until you change it), its
// expertise and concerns (one a line), role and persona from the catalogue or written in place (a new role or
// persona row is created first), model and an optional budget. What the server refuses is said next to the field it is about.
(function () {
  "use strict";
  const { request, listAll, el, toast, pageData, agentLabels, budgetLimits, setFieldError, clearFieldErrors, placeErrors } = window.Convene;
  const { personaGist, agentCard, namesakeText, fillModels, deleteAgent, writeIn } = window.ConveneAgents;
  const page = pageData();
  const $ = (sel) => document.querySelector(sel);
  const form = $("#agent-form");
  const NEW = "new"; // the select option that writes a role or persona in place

  const PROVIDER_WORDS = { rehearsal: "Offline rehearsal", anthropic: "Anthropic", openai: "OpenAI-compatible", scripted: "Scripted (tests)" };
  // The API's fields of each request, as the inputs that hold them, and in the page's words for the rest.
  const AGENT_FIELDS = { name: "#a-name", alias: "#a-alias", description: "#a-description", expertise: "#a-expertise",
    concerns: "#a-concerns", roleId: "#a-role", personaId: "#a-persona", provider: "#a-provider", model: "#a-model",
    budgetTokens: "#a-budget-tokens", budgetUsd: "#a-budget-usd" };
  const ROLE_FIELDS = { name: "#r-name", key: "#r-name", function: "#r-function", basePrompt: "#r-prompt" };
  const PERSONA_FIELDS = { name: "#p-name", key: "#p-name", prompt: "#p-prompt" };
  const FIELD_WORDS = { isFacilitator: "Facilitator" };
  const LISTS = ["expertise", "concerns"]; // list fields written one item a line

  let agents = []; // the participant agents shown
  let allAgents = []; // every agent you may use: a new name is checked against your own, an alias against theirs
  let labels = {};
  let roles = [];
  let personas = [];
  let editing = null; // the agent being edited, or null when creating
  let aliasEdited = false; // the alias was typed, not made from the name

  // The alias the server makes from a name (Django's slugify, then numbered when you or a built-in has it).
  function derivedAlias(name) {
    const base = name.normalize("NFKD").replace(/[^\x00-\x7f]/g, "").replace(/[^\w\s-]/g, "").trim().toLowerCase()
      .replace(/[-\s]+/g, "-").replace(/^[-_]+|[-_]+$/g, "").slice(0, 60) || "agent";
    const taken = new Set(allAgents.filter((a) => (a.isBuiltin || a.owner === page.user) && (!editing || a.id !== editing.id))
      .map((a) => String(a.alias || "").toLowerCase()));
    let alias = base;
    for (let n = 2; taken.has(alias); n += 1) alias = `${base}-${n}`;
    return alias;
  }

  // A list field's lines that say something, trimmed: the items sent.
  function lineItems(field) {
    return $(AGENT_FIELDS[field]).value.split("\n").map((line) => line.trim()).filter(Boolean);
  }

  // The line of a list field's textarea that holds the item at `index` of those sent: "Line 3".
  function itemLine(field, index) {
    if (!LISTS.includes(field)) return `Item ${index + 1}`;
    const lines = $(AGENT_FIELDS[field]).value.split("\n");
    const said = lines.map((line, n) => (line.trim() ? n : -1)).filter((n) => n >= 0);
    return `Line ${(said[index] ?? index) + 1}`;
  }

  function byId(rows, id) {
    return rows.find((r) => String(r.id) === String(id)) || null;
  }

  // --- the lists ----------------------------------------------------------------------------
  function card(agent) {
    const persona = byId(personas, agent.personaId);
    const role = byId(roles, agent.roleId) || agent.role;
    const model = [agent.provider ? PROVIDER_WORDS[agent.provider] || agent.provider : "", agent.model].filter(Boolean).join(" · ");
    const budget = budgetLimits(agent);
    return agentCard(agent, labels[agent.id], [
      el("p", { class: "muted small" }, `@${agent.alias}`),
      el("p", {}, agent.description || ""),
      el("dl", { class: "facts" },
        el("dt", {}, "Role"), el("dd", {}, role ? role.name : "none"),
        el("dt", {}, "Persona"), el("dd", { class: "persona-gist" }, persona ? personaGist(persona) : agent.persona ? agent.persona.name : "none"),
        el("dt", {}, "Model"), el("dd", {}, model || "default"),
        agent.expertise && agent.expertise.length ? [el("dt", {}, "Expertise"), el("dd", {}, agent.expertise.join(", "))] : null,
        budget ? [el("dt", {}, "Budget"), el("dd", {}, budget)] : null)]);
  }

  function option(row) {
    return el("option", { value: row.id }, row.name);
  }

  // A catalogue's select: none, the built-ins, your own, and writing a new one here. `keep` is an entry the
  // agent being edited has though it is not offered (another person's, for staff).
  function fillSelect(select, rows, { none, builtins, own, write }, keep) {
    const current = select.value;
    const shown = keep && !byId(rows, keep.id) ? [...rows, { ...keep, isBuiltin: false }] : rows;
    const groups = [[builtins, shown.filter((r) => r.isBuiltin)], [own, shown.filter((r) => !r.isBuiltin)]];
    select.replaceChildren(el("option", { value: "" }, none),
      ...groups.filter(([, list]) => list.length).map(([label, list]) => el("optgroup", { label }, list.map(option))),
      el("option", { value: NEW }, write));
    select.value = current && [...select.options].some((o) => o.value === current) ? current : "";
  }

  function fillCatalogue(keepRole, keepPersona) {
    fillSelect($("#a-role"), roles, { none: "No role", builtins: "Built-in roles", own: "Your roles", write: "Write a new role…" }, keepRole);
    // Facilitator personas are moderator prompts: offered on the Facilitators page, not here.
    fillSelect($("#a-persona"), personas.filter((p) => !p.isFacilitator),
      { none: "No persona", builtins: "Built-in personas", own: "Your personas", write: "Write a new persona…" }, keepPersona);
  }

  function render() {
    const builtins = agents.filter((a) => a.isBuiltin);
    const custom = agents.filter((a) => !a.isBuiltin);
    $("#custom-list").replaceChildren(...(custom.length ? custom.map(card) : [el("li", { class: "muted" }, "You have not created an agent yet.")]));
    $("#builtin-list").replaceChildren(...(builtins.length ? builtins.map(card) : [el("li", { class: "muted" }, "No built-in agents are installed (run manage.py seed_presets).")]));
  }

  async function load() {
    try {
      const [agentRows, roleRows, personaRows] = await Promise.all([listAll("agents"), listAll("roles"), listAll("personas")]);
      allAgents = agentRows;
      agents = agentRows.filter((a) => !a.isFacilitator);
      labels = agentLabels(agents);
      roles = roleRows;
      personas = personaRows;
      render();
      fillCatalogue();
    } catch (err) {
      $("#custom-list").replaceChildren(el("li", { class: "error" }, `Could not load the agents: ${err.message}`));
      $("#builtin-list").replaceChildren();
    }
  }

  // --- the form -----------------------------------------------------------------------------
  const HELP = { role: $("#a-role-help").textContent, persona: $("#a-persona-help").textContent };

  // The write-in fields show for "Write a new …"; a catalogue entry chosen says what it is under its select.
  function showWriteIns() {
    $("#new-role").hidden = $("#a-role").value !== NEW;
    $("#new-persona").hidden = $("#a-persona").value !== NEW;
    const role = byId(roles, $("#a-role").value);
    const persona = byId(personas, $("#a-persona").value);
    $("#a-role-help").textContent = role && role.function ? `${role.name}: ${role.function}` : HELP.role;
    $("#a-persona-help").textContent = persona ? personaGist(persona) : HELP.persona;
  }

  function openForm(open, agent) {
    form.hidden = !open;
    editing = open ? agent || null : null;
    $("#form-error").hidden = true;
    clearFieldErrors(form);
    if (open) {
      form.reset();
      fillCatalogue(editing && editing.role, editing && editing.persona);
      $("#form-title").textContent = editing ? `Edit ${editing.name}` : "Create an agent";
      $("#form-save").textContent = editing ? "Save changes" : "Save agent";
      $("#a-name").value = editing ? editing.name : "";
      $("#a-alias").value = editing ? editing.alias || "" : "";
      aliasEdited = Boolean(editing);
      $("#a-description").value = editing ? editing.description || "" : "";
      for (const field of LISTS) $(AGENT_FIELDS[field]).value = editing ? (editing[field] || []).join("\n") : "";
      $("#a-role").value = editing && editing.roleId != null ? String(editing.roleId) : "";
      $("#a-persona").value = editing && editing.personaId != null ? String(editing.personaId) : "";
      $("#a-provider").value = editing ? editing.provider || "" : "";
      $("#a-model").value = editing ? editing.model || "" : "";
      $("#a-budget-tokens").value = editing && editing.budgetTokens != null ? editing.budgetTokens : "";
      $("#a-budget-usd").value = editing && editing.budgetUsd != null ? editing.budgetUsd : "";
      showWriteIns();
    }
    $("#create-toggle").setAttribute("aria-expanded", String(open && !editing));
    if (open) $("#a-name").focus(); else $("#create-toggle").focus();
  }

  // What the page can tell before asking the server: each problem next to its field; true when none.
  function checkFields(name) {
    const problems = [
      [$("#a-name"), !name ? "Give the agent a name." : namesakeText(allAgents, name, editing)],
      [$("#r-name"), $("#a-role").value === NEW && !$("#r-name").value.trim() ? "Name the new role." : ""],
      [$("#p-name"), $("#a-persona").value === NEW && !$("#p-name").value.trim() ? "Name the new persona." : ""],
      [$("#p-prompt"), $("#a-persona").value === NEW && !$("#p-prompt").value.trim() ? "Write what the persona is told." : ""],
      [$("#a-budget-tokens"), $("#a-budget-tokens").validity.badInput || ($("#a-budget-tokens").value && !Number.isInteger(Number($("#a-budget-tokens").value)))
        ? "A whole number of tokens, or empty." : ""],
      [$("#a-budget-usd"), $("#a-budget-usd").validity.badInput ? "An amount in US dollars, or empty." : ""],
    ];
    for (const [input, text] of problems) setFieldError(input, text);
    const first = problems.find(([, text]) => text);
    if (first) first[0].focus();
    return !first;
  }

  function budgetValue(sel) {
    const value = $(sel).value.trim();
    return value === "" ? null : Number(value);
  }

  // A role or persona written in place becomes a catalogue row of yours first; it is then chosen in its select,
  // so a save that fails afterwards does not write it twice.
  async function writeIns() {
    if ($("#a-role").value === NEW) {
      const data = await writeIn("roles", { name: $("#r-name").value.trim(), function: $("#r-function").value.trim(),
        basePrompt: $("#r-prompt").value }, ROLE_FIELDS);
      roles = [...roles, data];
      fillCatalogue(editing && editing.role, editing && editing.persona);
      $("#a-role").value = String(data.id);
    }
    if ($("#a-persona").value === NEW) {
      const data = await writeIn("personas", { name: $("#p-name").value.trim(), prompt: $("#p-prompt").value,
        description: $("#a-description").value.trim() }, PERSONA_FIELDS);
      personas = [...personas, data];
      fillCatalogue(editing && editing.role, editing && editing.persona);
      $("#a-persona").value = String(data.id);
    }
    showWriteIns();
  }

  function body(name) {
    const out = {
      name, description: $("#a-description").value.trim(),
      roleId: $("#a-role").value ? Number($("#a-role").value) : null,
      personaId: $("#a-persona").value ? Number($("#a-persona").value) : null,
      provider: $("#a-provider").value, model: $("#a-model").value.trim(),
      expertise: lineItems("expertise"), concerns: lineItems("concerns"),
      budgetTokens: budgetValue("#a-budget-tokens"), budgetUsd: budgetValue("#a-budget-usd"),
    };
    // An alias left as made from the name is made by the server (numbered there when it is taken meanwhile);
    // one emptied while editing is made again from the name.
    const alias = $("#a-alias").value.trim();
    if (editing ? alias !== editing.alias : aliasEdited && alias) out.alias = alias;
    if (!editing) out.isFacilitator = false;
    return out;
  }

  async function save(event) {
    event.preventDefault();
    const error = $("#form-error");
    error.hidden = true;
    clearFieldErrors(form);
    const name = $("#a-name").value.trim();
    if (!checkFields(name)) return;
    const button = $("#form-save");
    button.disabled = true;
    try {
      await writeIns();
      const { data } = editing ? await request("PATCH", `agents/${editing.id}`, body(name)) : await request("POST", "agents", body(name));
      toast(editing ? `Saved "${data.name}"` : `Agent "${data.name}" (@${data.alias}) created`);
      openForm(false);
      announce();
      await load();
    } catch (err) {
      const { summary, first } = placeErrors(err, err.fields || AGENT_FIELDS, FIELD_WORDS, itemLine);
      error.textContent = summary;
      error.hidden = false;
      if (first) first.focus();
    } finally {
      button.disabled = false;
    }
  }

  async function remove(agentId) {
    const agent = byId(agents, agentId);
    if (!agent) return;
    $("#list-error").hidden = true;
    const refusal = await deleteAgent(agent, "agent");
    if (refusal === null) return;
    if (refusal) {
      $("#list-error").textContent = refusal;
      $("#list-error").hidden = false;
      return;
    }
    toast(`Deleted "${agent.name}"`);
    announce();
    if (editing && editing.id === agent.id) openForm(false);
    await load();
    $("#create-toggle").focus();
  }

  // Other pages of this site (the New discussion page, in another tab) hear that the agents changed.
  const changes = "BroadcastChannel" in window ? new BroadcastChannel("convene-agents") : null;
  function announce() {
    if (changes) changes.postMessage("changed");
  }

  // --- wiring -------------------------------------------------------------------------------
  $("#a-provider").replaceChildren(el("option", { value: "" }, `Default (${PROVIDER_WORDS[page.defaultProvider] || page.defaultProvider || "as configured"})`),
    ...(page.providers || []).map((p) => el("option", { value: p }, PROVIDER_WORDS[p] || p)));
  fillModels($("#model-options"));
  $("#create-toggle").addEventListener("click", () => openForm(form.hidden || Boolean(editing)));
  $("#form-cancel").addEventListener("click", () => openForm(false));
  $("#a-name").addEventListener("input", () => {
    if (!aliasEdited) $("#a-alias").value = $("#a-name").value.trim() ? derivedAlias($("#a-name").value) : "";
    setFieldError($("#a-name"), "");
  });
  $("#a-alias").addEventListener("input", () => {
    aliasEdited = Boolean($("#a-alias").value.trim()) || Boolean(editing);
    setFieldError($("#a-alias"), "");
  });
  for (const sel of ["#a-expertise", "#a-concerns"]) $(sel).addEventListener("input", () => setFieldError($(sel), ""));
  for (const sel of ["#a-role", "#a-persona"]) $(sel).addEventListener("change", () => { setFieldError($(sel), ""); showWriteIns(); });
  form.addEventListener("submit", save);
  form.addEventListener("keydown", (e) => { if (e.key === "Escape") openForm(false); });
  document.addEventListener("click", (e) => {
    const edit = e.target.closest("[data-edit]");
    if (edit) {
      const agent = byId(agents, edit.dataset.edit);
      if (agent && !agent.isBuiltin) openForm(true, agent);
      return;
    }
    const del = e.target.closest("[data-delete]");
    if (del) remove(del.dataset.delete);
  });
  load();
})();
