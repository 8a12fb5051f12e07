// The form that sets up a facilitation run: goal, outcome, deadline, who gets the result, facilitator.
// It posts to the REST API (POST /api/discussions, kind "facilitation") and opens the run's room,
// which shows the command that brings the facilitator into a group. What is wrong is said next to the field
// it is about (api.js's field errors); a refused form keeps what was typed.
(function () {
  "use strict";

  const { request, listAll, el, pageData, setFieldError, clearFieldErrors, placeErrors } = window.Convene;
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

  // A moment as the page says it elsewhere (the run's room, the list): "Nov 28, 2026, 5:00 PM".
  function readable(date) {
    return date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }

  // The browser's time zone, which the deadline is typed in; the group is told the deadline in UTC, as the
  // facilitator writes it in the chats ("2026-11-28 16:00 UTC").
  const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  function describeDeadline() {
    const when = new Date($("#run-deadline").value);
    const utc = !ZONE || /^(Etc\/)?(UTC|GMT|Zulu)$/.test(ZONE);
    const told = utc || Number.isNaN(when.getTime()) ? "" : ` The group is told it in UTC: ${when.toISOString().slice(0, 16).replace("T", " ")} UTC.`;
    $("#run-deadline-help").textContent = `${utc ? "In UTC (your browser's time zone), as the group is told it." : `In your time zone, ${ZONE}.`}${told} `
      + `At most ${page.maxTtlHours} hours from now.`;
  }

  // What is wrong with the deadline before asking the server, or "".
  function deadlineProblem() {
    const when = new Date($("#run-deadline").value);
    if (Number.isNaN(when.getTime())) return "Choose the date and time the run ends.";
    if (when.getTime() <= Date.now()) return "That moment has passed: choose one in the future.";
    const last = new Date(Date.now() + page.maxTtlHours * HOUR);
    if (when > last) return `No later than ${readable(last)}: a run lasts at most ${page.maxTtlHours} hours.`;
    return "";
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

  // The API's fields as the inputs that hold them (an item's, "slots.roles[2]", by its list), and in the form's
  // words the ones it has no input for.
  const FIELDS = { topic: "#run-topic", name: "#run-name", "slots.roles": "#run-roles", "slots.options": "#run-options",
    "slots.min": "#run-min", deadline: "#run-deadline", ttlHours: "#run-deadline", reportTo: "#run-report",
    moderatorId: "#run-facilitator" };
  const FIELD_WORDS = { pattern: "Outcome", "slots.allowMultiple": "Roles" };
  // An item of a list field as the form names it when it is empty: "Role 2".
  const ITEM_WORDS = { "slots.roles": "Role", "slots.options": "Option", reportTo: "Recipient" };

  // The item at `index` of a list field as it was typed ('"Lead"'), or its number when it is empty ("Role 3").
  function itemName(field, index) {
    const items = field === "reportTo" ? commaList($("#run-report").value) : slots()[field.slice("slots.".length)] || [];
    return items[index] ? `"${items[index]}"` : `${ITEM_WORDS[field]} ${index + 1}`;
  }

  // The server's details keyed by the form's fields: an item's ("slots.roles[2]", "reportTo[0]") said after the
  // item: '"Lead": listed twice.'
  function inFormWords(details) {
    const out = {};
    for (const [path, msgs] of Object.entries(details || {})) {
      const match = /^(slots\.roles|slots\.options|reportTo)\[(\d+)\]$/.exec(path);
      let text = (Array.isArray(msgs) ? msgs : [msgs]).filter((m) => typeof m === "string").join(" ");
      if (match && text) text = `${itemName(match[1], Number(match[2]))}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
      const field = match ? match[1] : path;
      out[field] = [...(out[field] || []), text];
    }
    return out;
  }

  function showErrors(err) {
    // The message is written for people ("Role 3 is not valid."), unless it names a field by its API path
    // ("reportTo[1] names no user ..."): then the form says it in its own words.
    const said = /\w\[\d+\]/.test(err.message || "") ? "The run was not created: what to change is said next to the field." : err.message;
    const { summary, first } = placeErrors({ message: said, details: inFormWords(err.details) }, FIELDS, FIELD_WORDS);
    $("#run-error").textContent = summary;
    $("#run-error").hidden = !summary;
    if (first) first.focus();
  }

  // What the form can tell before asking the server: each problem next to its field; true when none.
  function checkFields() {
    const problems = [[$("#run-topic"), $("#run-topic").value.trim() ? "" : "Say what the group should achieve."],
                      [$("#run-roles"), pattern() === "role_assignment" && !slots().roles.length ? "Name at least one role to fill." : ""],
                      [$("#run-deadline"), deadlineProblem()]];
    for (const [input, text] of problems) setFieldError(input, text);
    const wrong = problems.find(([, text]) => text);
    if (wrong) wrong[0].focus();
    return !wrong;
  }

  async function submit(event) {
    event.preventDefault();
    $("#run-error").hidden = true;
    clearFieldErrors(form);
    if (!checkFields()) return;
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
  describeDeadline();
  $("#run-deadline").addEventListener("input", () => { describeDeadline(); setFieldError($("#run-deadline"), ""); });
  for (const sel of ["#run-topic", "#run-name", "#run-roles", "#run-options", "#run-min", "#run-report"]) {
    $(sel).addEventListener("input", () => setFieldError($(sel), ""));
  }
  $("#run-facilitator").addEventListener("change", () => setFieldError($("#run-facilitator"), ""));
  for (const radio of form.querySelectorAll('input[name="pattern"]')) radio.addEventListener("change", showPattern);
  form.addEventListener("submit", submit);
  showPattern();
  listAll("agents?isFacilitator=true").then((agents) => {
    const labels = window.Convene.agentLabels(agents);  // two of one name show their alias and owner
    $("#run-facilitator").append(...agents.map((a) => el("option", { value: a.id }, labels[a.id])));
  }).catch(() => {});
})();
