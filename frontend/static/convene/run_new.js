// The form that sets up a facilitation run: goal, outcome, deadline, who gets the result, facilitator.
// It posts to the REST API (POST /api/discussions, kind "facilitation") and opens the run's room,
// which shows the command that brings the facilitator into a group.
(function () {
  "use strict";

  const { request, listAll, el, pageData } = window.Convene;
  const page = pageData();
  const $ = (selector) => document.querySelector(selector);
  const form = $("#run-form");
  const HOUR = 3600 * 1000;

  function pattern() {
    return form.querySelector('input[name="pattern"]:checked').value;
  }

  function showPattern() {
    for (const field of form.querySelectorAll("[data-pattern]")) field.hidden = field.dataset.pattern !== pattern();
  }

  // A datetime-local value (the browser's own time zone) for a Date.
  function localValue(date) {
    const pad = (n) => String(n).padStart(2, "0");
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  }

  function commaList(value) {
    return value.split(",").map((x) => x.trim()).filter(Boolean);
  }

  function slots() {
    if (pattern() === "role_assignment") return { roles: commaList($("#run-roles").value) };
    if (pattern() === "decision") {
      const options = commaList($("#run-options").value);
      return options.length ? { options } : {};
    }
    return { min: Number($("#run-min").value) };
  }

  // "ana, role:management" -> ["user:ana", "role:management"].
  function targets() {
    return commaList($("#run-report").value).map((t) => (/^(user|role):/.test(t) ? t : `user:${t}`));
  }

  function body() {
    const topic = $("#run-topic").value.trim();
    const deadline = new Date($("#run-deadline").value);
    const data = {
      kind: "facilitation", topic, name: $("#run-name").value.trim() || window.Convene.shortName(topic),
      pattern: pattern(), slots: slots(), reportTo: targets(),
      deadline: Number.isNaN(deadline.getTime()) ? "" : deadline.toISOString(),
    };
    // The run must outlive its deadline: past the default lifetime, ask for as long as it needs.
    const hours = Math.ceil((deadline.getTime() - Date.now()) / HOUR) + 1;
    if (hours > page.defaultTtlHours) data.ttlHours = Math.min(hours, page.maxTtlHours);
    if ($("#run-facilitator").value) data.moderatorId = Number($("#run-facilitator").value);
    return data;
  }

  const ERROR_FIELDS = [[/^topic|^name/, "#run-topic-error"], [/^deadline|^ttl/, "#run-deadline-error"],
                        [/^reportTo/, "#run-report-error"], [/^(slots|roles|options|min|pattern)/, "#run-slots-error"]];

  // What the form calls the outcome's fields, for the server's errors about them: "Role 2", "Options".
  const SLOT_WORDS = { roles: ["Roles", "Role"], options: ["Options", "Option"], min: ["At least this many items", ""] };

  // An error about one of the outcome's fields in the form's words: `slots.roles[1]` -> "Lead: listed twice."
  // (the item as typed, or its number when it is empty), `slots.options` -> "Options: ...".
  function slotText(field, text) {
    const match = /^slots\.(roles|options|min)(?:\[(\d+)\])?$/.exec(field);
    if (!match) return text;
    const [all, one] = SLOT_WORDS[match[1]];
    const lower = text.charAt(0).toLowerCase() + text.slice(1);
    if (match[2] === undefined) return `${all}: ${lower}`;
    const item = (slots()[match[1]] || [])[Number(match[2])];
    return `${item ? `"${item}"` : `${one} ${Number(match[2]) + 1}`}: ${lower}`;
  }

  function showErrors(err) {
    for (const [, id] of ERROR_FIELDS) { $(id).hidden = true; $(id).textContent = ""; }
    const details = err.details || {};
    const rest = [];
    const placed = {};
    for (const [field, messages] of Object.entries(details)) {
      const target = ERROR_FIELDS.find(([pattern]) => pattern.test(field));
      const text = slotText(field, Array.isArray(messages) ? messages.join(" ") : String(messages));
      if (target) placed[target[1]] = [...(placed[target[1]] || []), text];
      else if (text !== err.message) rest.push(text);
    }
    for (const [id, texts] of Object.entries(placed)) { $(id).textContent = texts.join(" "); $(id).hidden = false; }
    // The message is written for people ("Role 3 is not valid."); the fields' paths are only in the details.
    $("#run-error").textContent = [err.message || "", ...rest].join(" ");
    $("#run-error").hidden = false;
  }

  async function submit(event) {
    event.preventDefault();
    if (!$("#run-topic").value.trim()) {
      showErrors({ message: "The run needs a goal.", details: { topic: ["Say what the group should achieve."] } });
      return;
    }
    $("#run-create").disabled = true;
    try {
      const { data } = await request("POST", "discussions", body());
      window.location.assign(`/discussions/${data.id}/`);
    } catch (err) {
      showErrors(err);
      $("#run-create").disabled = false;
    }
  }

  const deadline = new Date(Date.now() + 24 * HOUR);
  deadline.setMinutes(0, 0, 0);
  $("#run-deadline").value = localValue(deadline);
  $("#run-deadline").min = localValue(new Date());
  for (const radio of form.querySelectorAll('input[name="pattern"]')) radio.addEventListener("change", showPattern);
  form.addEventListener("submit", submit);
  showPattern();
  listAll("agents?isFacilitator=true").then((agents) => {
    const labels = window.Convene.agentLabels(agents);  // two of one name show their alias and owner
    $("#run-facilitator").append(...agents.map((a) => el("option", { value: a.id }, labels[a.id])));
  }).catch(() => {});
})();
