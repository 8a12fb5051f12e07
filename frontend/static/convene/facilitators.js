// The facilitators panel: built-in presets (badged, not deletable), your own facilitators
// (deletable), and a create form that starts from a preset (one click fills name,
// description, model and persona) or from scratch. What the server refuses is said next to the field it is
// about, as on the Agents page (agent_forms.js).
(function () {
  "use strict";
  const { request, listAll, el, toast, pageData, agentLabels, setFieldError, clearFieldErrors, placeErrors } = window.Convene;
  const { personaGist, agentCard, namesakeText, fillModels, deleteAgent, writeIn } = window.ConveneAgents;
  // The API's fields of each request as the inputs that hold them, and in the form's words the ones it has none for.
  const AGENT_FIELDS = { name: "#f-name", description: "#f-description", model: "#f-model" };
  const PERSONA_FIELDS = { name: "#f-name", key: "#f-name", description: "#f-description", prompt: "#f-persona" };
  const FIELD_WORDS = { alias: "Alias", personaId: "Persona", roleId: "Role" };
  const page = pageData();
  const $ = (sel) => document.querySelector(sel);
  const GENERIC_PERSONA_KEY = "generic-facilitator";

  let facilitators = [];
  let allAgents = []; // every agent you may use: a new name is checked against your own
  let labels = {}; // agent id -> its name, with its alias and owner where another has the same name
  let personas = new Map(); // id -> persona
  let editing = null; // the agent being edited, or null when creating
  let templateName = ""; // the preset name the persona text was copied with
  let madePersona = null; // the persona row this form made for a save that was then refused: saved into again

  function modelForTier(tier) {
    return (page.modelTiers && page.modelTiers[tier]) || "";
  }

  function personaOf(agent) {
    return agent.personaId != null ? personas.get(agent.personaId) : null;
  }

  function builtinCard(agent) {
    const persona = personaOf(agent) || {};
    const best = persona.bestFor && persona.bestFor.length ? persona.bestFor.join(", ") : null;
    return agentCard(agent, labels[agent.id], [
      el("p", {}, agent.description || persona.description || ""),
      persona.philosophy ? el("p", { class: "muted small" }, persona.philosophy) : null,
      el("dl", { class: "facts" },
        best ? [el("dt", {}, "Best for"), el("dd", {}, best)] : null,
        persona.modelTier ? [el("dt", {}, "Model"), el("dd", {}, agent.model || modelForTier(persona.modelTier) || persona.modelTier)] : null)],
      el("button", { type: "button", class: "btn btn-small", "data-template": agent.id, "aria-label": `Use as template: ${agent.name}` }, "Use as template"));
  }

  function customCard(agent) {
    const persona = personaOf(agent);
    return agentCard(agent, labels[agent.id], [
      el("p", {}, agent.description || ""),
      el("dl", { class: "facts" },
        el("dt", {}, "Model"), el("dd", {}, agent.model || "default"),
        persona ? [el("dt", {}, "Persona"), el("dd", { class: "persona-gist" }, personaGist(persona))] : null)]);
  }

  function render() {
    const builtins = facilitators.filter((a) => a.isBuiltin);
    const custom = facilitators.filter((a) => !a.isBuiltin);
    $("#builtin-list").replaceChildren(...(builtins.length ? builtins.map(builtinCard) : [el("li", { class: "muted" }, "No built-in presets are installed (run manage.py seed_presets).")]));
    $("#custom-list").replaceChildren(...(custom.length ? custom.map(customCard) : [el("li", { class: "muted" }, "You have not created a facilitator yet.")]));
    const select = $("#template");
    const current = select.value;
    select.replaceChildren(el("option", { value: "" }, "Scratch (write your own persona)"),
      el("optgroup", { label: "Presets" }, builtins.map((a) => el("option", { value: a.id }, labels[a.id] || a.name))));
    select.value = current;
    fillModels($("#model-options"));
  }

  async function load() {
    try {
      const [agents, personaRows] = await Promise.all([listAll("agents"), listAll("personas")]);
      personas = new Map(personaRows.map((p) => [p.id, p]));
      allAgents = agents;
      facilitators = agents.filter((a) => a.isFacilitator);
      labels = agentLabels(facilitators);
      render();
    } catch (err) {
      $("#builtin-list").replaceChildren(el("li", { class: "error" }, `Could not load facilitators: ${err.message}`));
      $("#custom-list").replaceChildren();
    }
  }

  function openForm(open, agent) {
    const form = $("#create-form");
    form.hidden = !open;
    $("#create-error").hidden = true;
    clearFieldErrors(form);
    editing = open ? agent || null : null;
    madePersona = null;
    $("#create-title").textContent = editing ? `Edit ${editing.name}` : "Create a facilitator";
    $("#create-save").textContent = editing ? "Save changes" : "Save facilitator";
    $("#template").closest(".field").hidden = Boolean(editing);
    if (editing) {
      const persona = personaOf(editing) || {};
      $("#f-name").value = editing.name;
      $("#f-description").value = editing.description || "";
      $("#f-model").value = editing.model || "";
      $("#f-persona").value = persona.prompt || "";
      templateName = "";
    }
    $("#create-toggle").setAttribute("aria-expanded", String(open));
    if (open) $("#template").focus(); else $("#create-toggle").focus();
  }

  function applyTemplate(agentId) {
    const agent = facilitators.find((a) => String(a.id) === String(agentId));
    $("#create-error").hidden = true;
    clearFieldErrors($("#create-form"));
    if (!agent) {
      for (const id of ["#f-name", "#f-description", "#f-model", "#f-persona"]) $(id).value = "";
      return;
    }
    const persona = personaOf(agent) || {};
    const name = `My ${agent.name.replace(/^The /, "")}`;
    $("#f-name").value = name;
    $("#f-description").value = agent.description || persona.description || "";
    $("#f-model").value = agent.model || modelForTier(persona.modelTier);
    templateName = agent.name;
    $("#f-persona").value = renamed(persona.prompt || "", agent.name, name);
    templateName = name;
  }

  // The copied persona speaks of itself by the preset's name ("You are The Closer"): it takes the new name.
  function renamed(text, from, to) {
    if (!from || !to || from === to) return text;
    return text.split(from).join(to);
  }

  async function save(event) {
    event.preventDefault();
    const error = $("#create-error");
    error.hidden = true;
    clearFieldErrors($("#create-form"));
    const name = $("#f-name").value.trim();
    const description = $("#f-description").value.trim();
    const model = $("#f-model").value.trim();
    const prompt = editing ? $("#f-persona").value : renamed($("#f-persona").value, templateName, name);
    // A name you already use for another agent is refused (an older pair under one name may keep it).
    const nameProblem = !name ? "Give the facilitator a name." : namesakeText(allAgents, name, editing);
    if (nameProblem) {
      setFieldError($("#f-name"), nameProblem);
      $("#f-name").focus();
      return;
    }
    const template = editing ? null : facilitators.find((a) => String(a.id) === $("#template").value);
    const base = template ? personaOf(template) : null;
    const button = $("#create-save");
    button.disabled = true;
    if (editing) {
      try {
        await saveEdit(editing, { name, description, model, prompt });
        toast(`Saved "${name}"`);
        $("#create-form").reset();
        openForm(false);
        await load();
      } catch (err) {
        refused(err);
      } finally {
        button.disabled = false;
      }
      return;
    }
    try {
      let personaId = null;
      if (prompt.trim()) {
        // The persona is the moderator prompt: a new persona row holds the (edited) text.
        madePersona = await writeIn("personas", {
          name, description, prompt, isFacilitator: true,
          philosophy: base ? base.philosophy : "", bestFor: base ? base.bestFor : [], modelTier: base ? base.modelTier : "",
          style: base ? base.style : "",
        }, PERSONA_FIELDS, madePersona);
        personaId = madePersona.id;
      } else {
        const generic = [...personas.values()].find((p) => p.key === GENERIC_PERSONA_KEY);
        personaId = generic ? generic.id : null;
      }
      const body = { name, description, model, isFacilitator: true };
      if (personaId != null) body.personaId = personaId;
      if (template && template.roleId != null) body.roleId = template.roleId;
      const { data } = await request("POST", "agents", body);
      toast(`Facilitator "${data.name}" created`);
      $("#create-form").reset();
      openForm(false);
      await load();
    } catch (err) {
      refused(err);
    } finally {
      button.disabled = false;
    }
  }

  // The server's refusal: each field it names next to its input, the rest above the buttons.
  function refused(err) {
    const { summary, first } = placeErrors(err, err.fields || AGENT_FIELDS, FIELD_WORDS);
    const error = $("#create-error");
    error.textContent = summary;
    error.hidden = !summary;
    if (first) first.focus();
  }

  // Your own facilitator: its own persona row is edited in place; a shared one (the generic
  // persona) is replaced by a new persona holding the edited text.
  async function saveEdit(agent, { name, description, model, prompt }) {
    const persona = personaOf(agent);
    let personaId = agent.personaId;
    if (persona && !persona.isBuiltin && prompt.trim()) {
      await writeIn("personas", { name, prompt, description }, PERSONA_FIELDS, persona);
    } else if (prompt.trim() && (!persona || prompt !== persona.prompt || madePersona)) {
      madePersona = await writeIn("personas", { name, description, prompt, isFacilitator: true }, PERSONA_FIELDS, madePersona);
      personaId = madePersona.id;
    }
    const body = { name, description, model };
    if (personaId != null) body.personaId = personaId;
    await request("PATCH", `agents/${agent.id}`, body);
  }

  async function remove(agentId) {
    const agent = facilitators.find((a) => String(a.id) === String(agentId));
    if (!agent) return;
    const refusal = await deleteAgent(agent, "facilitator");
    if (refusal === null) return;
    if (refusal) { toast(refusal, "error"); return; }
    toast(`Deleted "${agent.name}"`);
    await load();
    $("#create-toggle").focus();
  }

  $("#create-toggle").addEventListener("click", () => { openForm($("#create-form").hidden || Boolean(editing)); if (!editing) $("#create-form").reset(); });
  $("#create-cancel").addEventListener("click", () => openForm(false));
  $("#template").addEventListener("change", (e) => applyTemplate(e.target.value));
  for (const sel of Object.values(PERSONA_FIELDS)) $(sel).addEventListener("input", () => setFieldError($(sel), ""));
  $("#f-model").addEventListener("input", () => setFieldError($("#f-model"), ""));
  $("#f-name").addEventListener("change", () => {
    const name = $("#f-name").value.trim();
    if (!editing && templateName && name) {
      $("#f-persona").value = renamed($("#f-persona").value, templateName, name);
      templateName = name;
    }
  });
  $("#create-form").addEventListener("submit", save);
  $("#create-form").addEventListener("keydown", (e) => { if (e.key === "Escape") openForm(false); });
  document.addEventListener("click", (e) => {
    const use = e.target.closest("[data-template]");
    if (use) {
      openForm(true);
      $("#template").value = use.dataset.template;
      applyTemplate(use.dataset.template);
      $("#f-name").focus();
      $("#f-name").select();
      return;
    }
    const edit = e.target.closest("[data-edit]");
    if (edit) {
      const agent = facilitators.find((a) => String(a.id) === edit.dataset.edit);
      if (agent && !agent.isBuiltin) { openForm(true, agent); $("#f-name").focus(); }
      return;
    }
    const del = e.target.closest("[data-delete]");
    if (del) remove(del.dataset.delete);
  });
  load();
})();
