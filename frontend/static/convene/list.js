// The discussion list: GET /api/discussions (search, status and kind filters), one page at a time.
// Shared discussions are marked with their owner; your own can be renamed and deleted here.
(function () {
  "use strict";
  const { request, el, statusBadge, toast, runState } = window.Convene;
  const $ = (sel) => document.querySelector(sel);
  let page = 1;
  let rows = [];
  let searchTimer = null;

  function relative(ts) {
    if (!ts) return "";
    const date = new Date(ts);
    return Number.isNaN(date.getTime()) ? "" : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }

  // Text as compared with a name: without case, runs of spaces or the punctuation that ends it.
  const comparable = (text) => String(text || "").replace(/\s+/g, " ").trim().replace(/[\s?.!:;,…]+$/, "").toLowerCase();

  // The topic under the name, as Markdown on one line (the row stays a row), unless it says nothing more
  // than the name does: a topic whose name is its first words (a name made from it) still shows. The name
  // made from a topic leaves its Markdown out, so the rendered text is compared.
  function topicLine(d) {
    if (!(d.topic || "").trim()) return null;
    const topic = window.ConveneMarkdown.inlineMarkdownNode(d.topic);
    if (comparable(topic.textContent) === comparable(d.name)) return null;
    return el("div", { class: "muted small clamp topic-line" }, topic);
  }

  function sharedTag(d) {
    if (d.access === "owner") return null;
    if (d.access === "staff") return el("span", { class: "badge shared small" }, `Owner: ${d.owner}`);
    return el("span", { class: "badge shared small", title: `Shared with you by ${d.owner} as ${d.access}` }, `Shared with you · ${d.owner}`);
  }

  // A workspace that paused itself says why.
  const PAUSED_BY = { idle: "nobody acted", budget: "budget used up" };
  // A completed or archived workspace is read-only (the server answers 409 to a change): no Rename.
  const READ_ONLY = ["completed", "archived"];

  function row(d) {
    const mine = d.access === "owner" || d.access === "staff";
    return el("tr", { "data-id": d.id, "data-status": d.status, "data-access": d.access },
      el("td", {}, el("a", { href: d.kind === "workspace" ? `/workspaces/${d.id}/` : `/discussions/${d.id}/`, class: "row-name" }, d.name || `Discussion #${d.id}`), " ", sharedTag(d), topicLine(d)),
      el("td", {}, d.kind === "workspace" ? "workspace" : d.kind && d.kind !== "discussion" ? `${d.format || ""} · ${d.kind}` : d.format || ""),
      el("td", {}, statusBadge(d.status), PAUSED_BY[d.pauseReason] ? el("span", { class: "muted small" }, ` ${PAUSED_BY[d.pauseReason]}`) : null),
      // A workspace's rounds go on until its manager completes it: no "of N".
      el("td", { class: "nowrap" }, d.kind === "workspace" ? `${d.round ?? 0}` : `${d.round ?? 0} of ${d.maxRounds ?? "?"}`),
      el("td", { class: "muted small nowrap" }, relative(d.updatedAt || d.createdAt)),
      el("td", {}, mine ? el("div", { class: "row-actions" },
        READ_ONLY.includes(d.status) ? null
          : el("button", { type: "button", class: "btn btn-small btn-ghost", "data-rename": d.id, "aria-label": `Rename ${d.name}` }, "Rename"),
        el("button", { type: "button", class: "btn btn-small btn-ghost btn-danger", "data-delete": d.id, "aria-label": `Delete ${d.name}` }, "Delete")) : null));
  }

  function query() {
    const params = new URLSearchParams({ page: String(page) });
    const q = $("#list-q").value.trim();
    if (q) params.set("q", q);
    if ($("#list-filter-status").value) params.set("status", $("#list-filter-status").value);
    if ($("#list-filter-kind").value) params.set("kind", $("#list-filter-kind").value);
    return params;
  }

  // The search, filters and page live in the address too: a reload, Back or a shared link shows the same list.
  function remember(params) {
    const shown = new URLSearchParams(params);
    if (shown.get("page") === "1") shown.delete("page");
    const url = `${window.location.pathname}${shown.toString() ? `?${shown}` : ""}`;
    if (url !== `${window.location.pathname}${window.location.search}`) history.replaceState(null, "", url);
  }

  function restore() {
    const params = new URLSearchParams(window.location.search);
    $("#list-q").value = params.get("q") || "";
    for (const [key, id] of [["status", "#list-filter-status"], ["kind", "#list-filter-kind"]]) {
      const select = $(id);
      select.value = params.get(key) || "";
      if (select.value !== (params.get(key) || "")) select.value = "";  // not one of the choices
    }
    page = Math.max(1, Number.parseInt(params.get("page") || "1", 10) || 1);
  }

  // ``quiet``: a refresh the reader did not ask for (``refreshLive``): an error leaves the list as it was.
  async function load({ quiet = false } = {}) {
    const status = $("#list-status");
    try {
      const params = query();
      remember(params);
      const { data, meta } = await request("GET", `discussions?${params}`);
      rows = Array.isArray(data) ? data : (data && data.results) || [];
      $("#discussion-rows").replaceChildren(...rows.map(row));
      $("#discussion-table").hidden = rows.length === 0;
      const total = meta.count ?? meta.total ?? rows.length;
      const filtered = params.has("q") || params.has("status") || params.has("kind");
      status.textContent = rows.length ? `${total} discussion${total === 1 ? "" : "s"}`
        : (filtered ? "No discussion matches." : "No discussions yet. Create one to get started.");
      const pages = meta.totalPages || meta.pages || (meta.pageSize ? Math.ceil(total / meta.pageSize) : 1);
      if (!rows.length && page > 1 && pages >= 1 && page > pages) { page = pages; return load(); }  // an old link's page
      $("#pager").hidden = !(pages > 1);
      $("#page-info").textContent = `Page ${page} of ${pages}`;
      $("#prev-page").disabled = page <= 1;
      $("#next-page").disabled = page >= pages;
    } catch (err) {
      if (!quiet) status.textContent = `Could not load discussions: ${err.message}`;
    }
  }

  // A running discussion's status and round change under the reader: while one is listed, the list is asked for
  // again every 20 s when the page is in view, never while the reader is inside the table (a focused button stays).
  const LIVE = ["active", "paused"];
  const REFRESH_MS = 20000;
  function refreshLive() {
    if (document.hidden || !rows.some((d) => LIVE.includes(d.status))) return;
    if ($("#discussion-table").contains(document.activeElement)) return;
    load({ quiet: true });
  }

  async function rename(id) {
    const d = rows.find((r) => String(r.id) === String(id));
    if (!d) return;
    const name = window.prompt("New name", d.name);
    if (name === null || !name.trim() || name.trim() === d.name) return;
    try {
      await request("PATCH", `discussions/${id}`, { name: name.trim() });
      toast(`Renamed to "${name.trim()}"`);
      await load();
    } catch (err) {
      toast(`Could not rename: ${err.message}`, "error");
    }
  }

  async function remove(id) {
    const d = rows.find((r) => String(r.id) === String(id));
    if (!d) return;
    const running = d.status === "active" || d.status === "paused";
    const question = running ? `"${d.name}" is running. Stop it and delete it with its transcript?` : `Delete "${d.name}" and its transcript?`;
    if (!window.confirm(question)) return;
    try {
      if (running) await request("POST", `discussions/${id}/stop`);
      await request("DELETE", `discussions/${id}`);
      toast(`Deleted "${d.name}"`);
      await load();
    } catch (err) {
      toast(`Could not delete: ${err.message}`, "error");
    }
  }

  // Import: a discussion file (what a room's "Export discussion file" writes) becomes a new discussion, which opens.
  function importError(message) {
    $("#import-error").textContent = message;
    $("#import-error").hidden = !message;
  }

  async function importFile(file) {
    const button = $("#import-button");
    importError("");
    button.disabled = true;
    button.textContent = "Importing…";
    try {
      const { data } = await request("POST", "discussions/import", await file.text(), { contentType: "text/markdown" });
      window.location.assign(`/discussions/${data.id}/`);
    } catch (err) {
      // Line 1 is the file's header: without it, this is some other file (the minutes, say), not a discussion file.
      const other = err.code === "malformed_file" && Number((err.details || {}).line) === 1;
      importError(other ? `${file.name} is not a discussion file. Choose one written by a room's "Export discussion file" `
        + "(minutes and .docx files cannot be imported)." : `Could not import ${file.name}: ${err.message}`);
      button.disabled = false;
      button.textContent = "Import discussion file";
      button.focus();
    }
  }

  $("#import-button").addEventListener("click", () => $("#import-file").click());
  $("#import-file").addEventListener("change", () => {
    const file = $("#import-file").files[0];
    $("#import-file").value = "";  // the same file may be chosen again after fixing it
    if (file) importFile(file);
  });

  $("#list-filters").addEventListener("submit", (e) => e.preventDefault());
  $("#list-q").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => { page = 1; load(); }, 250); });
  for (const id of ["#list-filter-status", "#list-filter-kind"]) $(id).addEventListener("change", () => { page = 1; load(); });
  $("#discussion-rows").addEventListener("click", (e) => {
    const ren = e.target.closest("[data-rename]");
    if (ren) { rename(ren.dataset.rename); return; }
    const del = e.target.closest("[data-delete]");
    if (del) remove(del.dataset.delete);
  });
  $("#prev-page").addEventListener("click", () => { page = Math.max(1, page - 1); load(); });
  $("#next-page").addEventListener("click", () => { page += 1; load(); });
  restore();
  load();
  setInterval(refreshLive, REFRESH_MS);

  // The caller's facilitation runs (ephemeral ones are never in the list above).
  request("GET", "me/facilitation-runs").then(({ data }) => {
    if (!data.length) return;
    $("#my-runs-list").replaceChildren(...data.map((r) => el("li", { "data-discussion-id": r.discussionId },
      el("a", { href: r.link }, r.name), " ",
      el("span", { class: "muted small" }, `· ${runState(r.state).toLowerCase()} · deadline ${relative(r.deadline)}`))));
    $("#my-runs").hidden = false;
  }).catch(() => {});
})();
