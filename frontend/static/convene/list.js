// The discussion list: GET /api/discussions, one page at a time.
(function () {
  "use strict";
  const { request, el, statusBadge } = window.Convene;
  const $ = (sel) => document.querySelector(sel);
  let page = 1;

  function relative(ts) {
    if (!ts) return "";
    const date = new Date(ts);
    return Number.isNaN(date.getTime()) ? "" : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }

  async function load() {
    const status = $("#list-status");
    try {
      const { data, meta } = await request("GET", `discussions?page=${page}`);
      const rows = Array.isArray(data) ? data : (data && data.results) || [];
      const body = $("#discussion-rows");
      body.replaceChildren(...rows.map((d) => el("tr", { "data-id": d.id, "data-status": d.status },
        el("td", {}, el("a", { href: `/discussions/${d.id}/` }, d.name || `Discussion #${d.id}`),
          el("div", { class: "muted small clamp" }, d.topic || "")),
        el("td", {}, d.format || ""),
        el("td", {}, statusBadge(d.status)),
        el("td", { class: "nowrap" }, `${d.round ?? 0} of ${d.maxRounds ?? "?"}`),
        el("td", { class: "muted small nowrap" }, relative(d.updatedAt || d.createdAt)))));
      $("#discussion-table").hidden = rows.length === 0;
      const total = meta.count ?? meta.total ?? rows.length;
      status.textContent = rows.length ? `${total} discussion${total === 1 ? "" : "s"}` : "No discussions yet. Create one to get started.";
      const pages = meta.totalPages || meta.pages || (meta.pageSize ? Math.ceil(total / meta.pageSize) : 1);
      $("#pager").hidden = !(pages > 1);
      $("#page-info").textContent = `Page ${page} of ${pages}`;
      $("#prev-page").disabled = page <= 1;
      $("#next-page").disabled = page >= pages;
    } catch (err) {
      status.textContent = `Could not load discussions: ${err.message}`;
    }
  }

  $("#prev-page").addEventListener("click", () => { page = Math.max(1, page - 1); load(); });
  $("#next-page").addEventListener("click", () => { page += 1; load(); });
  load();
})();
