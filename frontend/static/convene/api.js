// Shared helpers for every page: the REST client (envelope {success, data, error, meta}),
// small DOM builders and a toast. No framework; plain browser JavaScript.
(function () {
  "use strict";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  class ApiError extends Error {
    constructor(status, error) {
      super((error && error.message) || `Request failed (${status})`);
      this.status = status;
      this.code = (error && error.code) || "error";
      this.details = (error && error.details) || {};
    }
  }

  // Calls /api/<path>; resolves to {data, meta} or throws ApiError. The body is sent as JSON, or as it is
  // with `contentType` (a discussion file: text, "text/markdown").
  async function request(method, path, body, { contentType } = {}) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET" && method !== "HEAD") init.headers["X-CSRFToken"] = csrfToken();
    if (body !== undefined) {
      init.headers["Content-Type"] = contentType || "application/json";
      init.body = contentType ? body : JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`/api/${path.replace(/^\//, "")}`, init);
    } catch (err) {
      throw new ApiError(0, { code: "network", message: "The server could not be reached." });
    }
    if (response.status === 204) return { data: null, meta: {} };
    let payload = null;
    try {
      payload = await response.json();
    } catch (err) {
      payload = null;
    }
    if (!response.ok || !payload || payload.success === false) {
      throw new ApiError(response.status, payload && payload.error ? payload.error : { message: `Request failed (${response.status})` });
    }
    return { data: payload.data, meta: payload.meta || {} };
  }

  // Every page of a paginated list (follows meta.next / page numbers until done).
  async function listAll(path, { maxPages = 20 } = {}) {
    const items = [];
    let page = 1;
    for (; page <= maxPages; page += 1) {
      const sep = path.includes("?") ? "&" : "?";
      const { data, meta } = await request("GET", `${path}${sep}page=${page}&pageSize=100`);
      const rows = Array.isArray(data) ? data : (data && (data.results || data.items)) || [];
      items.push(...rows);
      const total = meta.count ?? meta.total;
      const hasNext = meta.next ? true : (meta.hasNext ?? (meta.totalPages ? page < meta.totalPages : (total !== undefined && items.length < total)));
      if (!hasNext || rows.length === 0) break;
    }
    return items;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "html") node.innerHTML = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key === "style") {
        // Through the CSSOM: the Content-Security-Policy blocks style attributes.
        for (const decl of String(value).split(";")) {
          const i = decl.indexOf(":");
          if (i > 0) node.style.setProperty(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
        }
      }
      else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function escapeHtml(text) {
    return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  let toastTimer = null;
  function toast(message, kind) {
    const node = document.getElementById("toast");
    if (!node) return;
    node.textContent = message;
    node.dataset.kind = kind || "info";
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, 4000);
  }

  function pageData() {
    const node = document.getElementById("page-data");
    return node ? JSON.parse(node.textContent) : {};
  }

  const STATUS_LABELS = { draft: "Draft", active: "Active", paused: "Paused", concluded: "Concluded", stopped: "Stopped", failed: "Failed",
                          completed: "Completed", archived: "Archived" };
  const ROLE_LABELS = { participant: "Participant", observer: "Observer", devil_advocate: "Devil's advocate", background: "Background", facilitator: "Facilitator", system: "System" };

  function statusBadge(status) {
    return el("span", { class: `badge status status-${status}`, "data-status": status }, STATUS_LABELS[status] || status);
  }

  function roleBadge(role) {
    return el("span", { class: `badge role role-${role}`, "data-role": role }, ROLE_LABELS[role] || role);
  }

  // An API error as people read it: its message, then what the details say of each field, without the API's
  // field paths ("username: …", "participants[1].agentId: …"). `words` puts a field in the page's words: an
  // object {field: label} ("Label: what is wrong"), or a function (field, text) that returns the line to show
  // (or nothing, for the text alone). A detail that only repeats the message is left out. `separator` joins
  // the message and the fields' lines: a space (one paragraph), or "\n" for one line each where the text
  // keeps its line breaks (the desk's toast).
  function errorText(error, words, separator = " ") {
    const lines = [typeof error === "string" ? error : (error && error.message) || ""].filter(Boolean);
    for (const [field, msgs] of Object.entries((error && error.details) || {})) {
      const text = (Array.isArray(msgs) ? msgs : [msgs]).filter((m) => typeof m === "string").join(" ").trim();
      if (!text || lines.includes(text)) continue;
      const line = typeof words === "function" ? words(field, text)
        : words && words[field] ? `${words[field]}: ${text}` : "";
      lines.push(line || text);
    }
    return lines.join(separator);
  }

  // A form field's error line is the element `<input id>-error`, named by the input's aria-describedby; one with
  // an error is marked invalid.

  function setFieldError(input, text) {
    const node = document.getElementById(`${input.id}-error`);
    if (node) {
      node.textContent = text || "";
      node.hidden = !text;
    }
    if (text) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }

  function clearFieldErrors(form) {
    for (const input of form.querySelectorAll("[aria-invalid]")) setFieldError(input, "");
  }

  // One field's messages in words. A list field's are by item ({"2": [...]}): each is said after `item(index)`
  // ("Line 3"; "Item 3" when the page names none).
  function fieldText(field, msgs, item) {
    if (!msgs || typeof msgs !== "object" || Array.isArray(msgs)) return errorText({ details: { [field]: msgs } });
    return Object.entries(msgs).map(([key, inner]) => {
      const text = fieldText(field, inner, item);
      return text && /^\d+$/.test(key) ? `${item ? item(field, Number(key)) : `Item ${Number(key) + 1}`}: ${text}` : text;
    }).filter(Boolean).join(" ");
  }

  // The details of a list field's items, which the API names one by one ("expertise[2]"), gathered under the field
  // when the form has an input for it ({expertise: {"2": [...]}}), as fieldText says them.
  function byField(details, fields) {
    const out = {};
    for (const [key, msgs] of Object.entries(details)) {
      const match = /^(.+)\[(\d+)\]$/.exec(key);
      if (!match || fields[key] || !fields[match[1]]) {
        out[key] = msgs;
        continue;
      }
      const prior = out[match[1]];
      const items = prior && typeof prior === "object" && !Array.isArray(prior) ? prior : prior ? { "": prior } : {};
      items[match[2]] = msgs;
      out[match[1]] = items;
    }
    return out;
  }

  // The server's refusal put where it belongs: each field of `fields` ({api field: input or its selector}) that the details
  // name gets its text next to it (two API fields on one input are one line; a list field's items as
  // `item(field, index)` names them); what is left (the message, fields without an input) is returned in the
  // page's `words` (as errorText says them), with the first input that is wrong, to focus.
  function placeErrors(err, fields, words, item) {
    const rest = {};
    const placed = new Map();
    for (const [field, msgs] of Object.entries(byField((err && err.details) || {}, fields))) {
      const input = typeof fields[field] === "string" ? document.querySelector(fields[field]) : fields[field];
      if (!input) { rest[field] = msgs; continue; }
      const text = fieldText(field, msgs, item);
      placed.set(input, [placed.get(input), text].filter(Boolean).join(" "));
    }
    for (const [input, text] of placed) setFieldError(input, text);
    const summary = errorText({ message: (err && err.message) || String(err || ""), details: rest }, words);
    return { summary, first: placed.size ? [...placed.keys()][0] : null };
  }

  // "1 question", "3 questions": a count with its noun in the matching form.
  function counted(n, noun, plural) {
    return `${n} ${n === 1 ? noun : (plural || `${noun}s`)}`;
  }

  // A facilitation run's state in the words the facilitator uses in the chats (the page hands them on:
  // facilitation.goals.texts.STATE_WORDS), starting with a capital.
  function runState(state) {
    const words = (pageData().runStates || {})[state] || state || "";
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  // A span of time as people say it: "an hour", "90 minutes", "45 seconds".
  function duration(seconds) {
    const whole = (unit, one, noun) => (seconds / unit === 1 ? one : counted(seconds / unit, noun));
    if (seconds >= 3600 && seconds % 3600 === 0) return whole(3600, "an hour", "hour");
    if (seconds >= 60 && seconds % 60 === 0) return whole(60, "a minute", "minute");
    return counted(seconds, "second");
  }

  // A budget's limits in words ({budgetTokens, budgetUsd}, either absent or null): "20,000 tokens and $1.50", or "".
  function budgetLimits(b) {
    return [b.budgetTokens != null ? `${b.budgetTokens.toLocaleString("en")} tokens` : "",
      b.budgetUsd != null ? `$${Number(b.budgetUsd).toFixed(2)}` : ""].filter(Boolean).join(" and ");
  }

  // What a room has spent (its REST shape's usage), against its budget when it has one.
  function budgetText(r) {
    const usage = r.usage || {};
    const tokens = (usage.totalTokens || 0).toLocaleString("en");
    const usd = `$${Number(usage.costUsd || 0).toFixed(2)}`;
    const limits = budgetLimits(r);
    return limits ? `Spent ${tokens} tokens (${usd}) of a budget of ${limits}.`
      : `Spent ${tokens} tokens (${usd}); no budget caps it.`;
  }

  // Agents as people can tell them apart where one is chosen by name: {id: label}. `agents` are as the API
  // gives them ({id, name, alias, isBuiltin, owner}: an agent, a room's participant or its moderator). A name
  // no other agent of the list has (without case) is the label; one that is shared carries the agent's
  // @alias and whose it is ("built-in", "yours", or its owner's name), and its number when even that is shared.
  function agentLabels(agents) {
    const me = pageData().user;
    const fold = (text) => String(text || "").trim().toLowerCase();
    const tally = (keyOf) => agents.reduce((m, a) => m.set(keyOf(a), (m.get(keyOf(a)) || 0) + 1), new Map());
    const names = tally((a) => fold(a.name));
    const extras = new Map(agents.map((a) => {
      if (names.get(fold(a.name)) < 2) return [a.id, []];
      const owner = a.isBuiltin ? "built-in" : a.owner && a.owner === me ? "yours" : a.owner ? `${a.owner}'s` : "";
      return [a.id, [a.alias ? `@${a.alias}` : "", owner].filter(Boolean)];
    }));
    const labelOf = (a) => (extras.get(a.id).length ? `${a.name} (${extras.get(a.id).join(", ")})` : a.name);
    const labels = tally((a) => fold(labelOf(a)));
    for (const a of agents) if (labels.get(fold(labelOf(a))) > 1) extras.get(a.id).push(`#${a.id}`);
    return Object.fromEntries(agents.map((a) => [a.id, labelOf(a)]));
  }

  // The caller's own agent (by its `owner`) that already has this name (without case), other than exceptId;
  // null when none. Two of one person's agents under one name cannot be told apart.
  function ownAgentNamed(agents, name, exceptId) {
    const me = pageData().user;
    const wanted = String(name || "").trim().toLowerCase();
    return agents.find((a) => !a.isBuiltin && a.owner === me && String(a.id) !== String(exceptId)
      && String(a.name || "").trim().toLowerCase() === wanted) || null;
  }

  // The name of a room left unnamed (the wizard, a facilitation run's form): the topic's first words (whole
  // words, at most ~48 characters), not the topic again; Markdown's emphasis and code marks are left out (a
  // cut could leave one unclosed, and a name is plain text).
  function shortName(topic) {
    const plain = topic.replace(/[*_`~]+/g, "").replace(/^#+\s*/, "").trim() || topic;
    const first = plain.split(/(?<=[.?!])\s|\n/)[0].replace(/[?.!:;,]+$/, "");
    if (first.length <= 48) return first;
    const words = first.split(/\s+/);
    let name = "";
    for (const w of words) {
      if ((name ? `${name} ${w}` : w).length > 45) break;
      name = name ? `${name} ${w}` : w;
    }
    return `${name || first.slice(0, 45)}…`;
  }

  window.Convene = { request, listAll, ApiError, el, escapeHtml, toast, pageData, statusBadge, roleBadge, errorText,
                     setFieldError, clearFieldErrors, placeErrors, counted, duration,
                     runState, budgetLimits, budgetText, agentLabels, ownAgentNamed, shortName, STATUS_LABELS, ROLE_LABELS };
})();
