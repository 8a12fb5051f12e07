// What the Facilitators and Agents pages share: an agent's card, the check of a name you already use,
// the model suggestions, deleting an agent (a refusal said in words) and a role or persona written on the form
// made a row once. The server's field errors are put next to their fields by api.js's code. Loaded after api.js.
(function () {
  "use strict";
  const { request, el, pageData, errorText, ownAgentNamed } = window.Convene;

  // The persona as its text says it (its first sentences), not its name again.
  function personaGist(persona) {
    const text = String(persona.prompt || persona.description || "").replace(/\s+/g, " ").trim();
    if (!text) return persona.name;
    return text.length > 180 ? `${text.slice(0, text.lastIndexOf(" ", 177) > 80 ? text.lastIndexOf(" ", 177) : 177)}…` : text;
  }

  // Staff see everyone's agents: one of another person's says whose it is (one whose owner is gone, only
  // that it is a custom one).
  function ownerBadge(agent) {
    const me = pageData().user;
    return agent.owner === me ? "Yours" : agent.owner ? `${agent.owner}'s` : "Custom";
  }

  // An agent's card: its name (as `label` tells it apart), a Built-in or owner badge, then `body` (nodes).
  // A custom agent gets Edit and Delete buttons (data-edit, data-delete); `actions` adds more.
  function agentCard(agent, label, body, actions) {
    const builtin = Boolean(agent.isBuiltin);
    return el("li", { class: "card fcard", "data-agent-id": agent.id, "data-builtin": String(builtin) },
      el("header", { class: "card-head" }, el("h3", {}, label || agent.name),
        el("span", { class: `badge ${builtin ? "builtin" : "custom"}` }, builtin ? "Built-in" : ownerBadge(agent))),
      body,
      el("div", { class: "inline" }, actions || null,
        builtin ? null : [
          el("button", { type: "button", class: "btn btn-small", "data-edit": agent.id, "aria-label": `Edit ${agent.name}` }, "Edit"),
          el("button", { type: "button", class: "btn btn-small btn-danger", "data-delete": agent.id, "aria-label": `Delete ${agent.name}` }, "Delete")]));
  }

  // Why `name` cannot be given to an agent of yours (another of your agents has it, without case), or "".
  // `editing` is the agent being renamed: its own name does not stand in its way.
  function namesakeText(agents, name, editing) {
    if (editing && editing.name === name) return "";
    const namesake = ownAgentNamed(agents, name, editing && editing.id);
    if (!namesake) return "";
    return `You already have an assistant named "${namesake.name}"${namesake.alias ? ` (@${namesake.alias})` : ""}. `
      + "Give this one another name, so the two can be told apart where one is chosen.";
  }

  // The models of the configured tiers, as suggestions for a model field's <datalist>.
  function fillModels(datalist) {
    const models = new Set(Object.values(pageData().modelTiers || {}));
    datalist.replaceChildren(...[...models].map((m) => el("option", { value: m })));
  }

  // A refused delete in words: the API's message, and for an agent still in use what holds it.
  function deleteRefusal(err, agent) {
    const said = errorText(err);
    if (err.code !== "in_use") return `Could not delete "${agent.name}": ${said}`;
    const what = agent.isFacilitator ? "it facilitates a discussion, or has a seat in one" : "it has a seat in a discussion";
    return `Could not delete "${agent.name}": ${said} It stays while ${what} (the discussion keeps who spoke); `
      + "it can be deleted once no discussion holds it.";
  }

  // Asks, then deletes one of your agents. Resolves to "" when it is deleted, null when not confirmed,
  // else the refusal in words.
  async function deleteAgent(agent, kind) {
    if (!window.confirm(`Delete the ${kind} "${agent.name}"?`)) return null;
    try {
      await request("DELETE", `agents/${agent.id}`);
      return "";
    } catch (err) {
      return deleteRefusal(err, agent);
    }
  }

  // --- rows written on the form ------------------------------------------------------------
  // A role or persona written on an agent's form becomes a catalogue row of yours (`path`: "roles", "personas") before
  // the agent that uses it; a refusal carries `fields`, the inputs its fields are in (see placeErrors). `made` is the
  // row this form already made for it: a save refused after the row was made is saved again into that row, with
  // what is written now, instead of making a second one. Resolves to the row.
  async function writeIn(path, body, fields, made) {
    try {
      if (made) {
        try {
          return (await request("PATCH", `${path}/${made.id}`, body)).data;
        } catch (err) {
          if (err.status !== 404) throw err; // deleted meanwhile: made anew
        }
      }
      return (await request("POST", path, body)).data;
    } catch (err) {
      throw Object.assign(err, { fields });
    }
  }

  window.ConveneAgents = { personaGist, ownerBadge, agentCard, namesakeText, fillModels, deleteAgent, deleteRefusal, writeIn };
})();
