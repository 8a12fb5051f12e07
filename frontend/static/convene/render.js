// Rendering of timeline cards: participant turns, facilitator decisions, the synthesis.
// Markers come from the server (turn.markers, each with its line); this only highlights them.
(function () {
  "use strict";
  const { el, roleBadge } = window.Convene;

  const COLLAPSE_CHARS = 700;
  // Lines that start with a marker keyword, when the server did not list markers (e.g. facilitator text).
  const MARKER_LINE = /^\s*(?:>\s*)*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:\*\*|__)?(VOTE|Q|TODO|DECISION|ASSIGNED|DONE|CONCERN)(?:\*\*|__)?\s*:/i;
  const KEY_TO_TYPE = { VOTE: "vote", Q: "question", TODO: "todo", DECISION: "decision", ASSIGNED: "assigned", DONE: "done", CONCERN: "concern" };
  const MENTION = /(^|[^\w@.`/])@([A-Za-z][A-Za-z0-9_-]*)/g;

  function gavelIcon() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "18");
    svg.setAttribute("height", "18");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("class", "gavel");
    svg.innerHTML = '<g fill="currentColor"><rect x="9.2" y="2.2" width="9" height="4.6" rx="1" transform="rotate(45 13.7 4.5)"/>' +
      '<rect x="4.7" y="6.7" width="9" height="4.6" rx="1" transform="rotate(45 9.2 9)"/>' +
      '<rect x="12.2" y="10.4" width="2.6" height="11" rx="1.2" transform="rotate(-45 13.5 15.9)"/>' +
      '<rect x="2" y="20" width="10" height="2.2" rx="1"/></g>';
    return svg;
  }

  // Content with marker lines highlighted and @mentions emphasised; text only, never HTML.
  function contentNode(text, markers) {
    const lines = String(text || "").split("\n");
    const byLine = new Map();
    for (const m of markers || []) {
      if (m && typeof m.line === "number" && m.type && m.type !== "mention" && !byLine.has(m.line)) byLine.set(m.line, m.type);
    }
    const hasServerMarkers = byLine.size > 0;
    const box = el("div", { class: "content" });
    lines.forEach((line, i) => {
      let type = byLine.get(i);
      if (!type && !hasServerMarkers) {
        const match = MARKER_LINE.exec(line);
        if (match) type = KEY_TO_TYPE[match[1].toUpperCase()];
      }
      const row = el("span", { class: type ? `line marker marker-${type}` : "line", "data-marker": type || null });
      const key = type ? MARKER_LINE.exec(line) : null;
      if (key) {
        // The keyword ("Q:", "DECISION:" ...) stands out; the rest reads as text.
        row.append(el("strong", { class: "marker-key" }, line.slice(0, key[0].length)));
        appendWithMentions(row, line.slice(key[0].length));
      } else {
        appendWithMentions(row, line);
      }
      box.append(row);
      if (i < lines.length - 1) box.append("\n");
    });
    return box;
  }

  function appendWithMentions(node, line) {
    let last = 0;
    MENTION.lastIndex = 0;
    let match;
    while ((match = MENTION.exec(line)) !== null) {
      const start = match.index + match[1].length;
      node.append(line.slice(last, start));
      node.append(el("span", { class: "mention" }, `@${match[2]}`));
      last = start + match[2].length + 1;
    }
    node.append(line.slice(last));
  }

  function collapsible(contentEl, length) {
    if (length <= COLLAPSE_CHARS) return [contentEl];
    contentEl.classList.add("collapsed");
    const id = `c-${Math.random().toString(36).slice(2, 9)}`;
    contentEl.id = id;
    const button = el("button", { type: "button", class: "btn btn-link show-more", "aria-expanded": "false", "aria-controls": id }, "Show more");
    button.addEventListener("click", () => {
      const open = contentEl.classList.toggle("collapsed") === false;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show less" : "Show more";
    });
    return [contentEl, button];
  }

  function timeLabel(ts) {
    if (!ts) return null;
    const date = new Date(ts);
    if (Number.isNaN(date.getTime())) return null;
    return el("time", { datetime: ts, class: "muted small" }, date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  }

  function rehearsalTag(turn) {
    return turn && turn.rehearsal ? el("span", { class: "badge rehearsal small", title: "Written by the offline rehearsal model" }, "rehearsal") : null;
  }

  function participantCard(event) {
    const turn = event.turn || {};
    const speaker = turn.speaker || {};
    const role = speaker.role || "participant";
    const status = turn.status || "ok";
    const head = el("header", { class: "card-head" },
      el("span", { class: "speaker" }, speaker.name || "Unknown"),
      roleBadge(role),
      el("span", { class: "muted small" }, `Round ${turn.round ?? "?"}`),
      rehearsalTag(turn),
      status !== "ok" ? el("span", { class: `badge turn-status turn-${status}` }, status === "timed_out" ? "Timed out" : "Error") : null,
      el("span", { class: "spacer" }),
      timeLabel(event.ts));
    const text = status === "timed_out" && !turn.content ? "No response: the turn timed out." : turn.content;
    const body = collapsible(contentNode(text, turn.markers), (text || "").length);
    return el("li", {
      class: `tcard turn role-${role} ${status !== "ok" ? "turn-failed" : ""}`,
      "data-seq": event.seq, "data-kind": "turn", "data-turn-id": turn.id, "data-speaker-id": speaker.id,
      "aria-label": `${speaker.name || "Unknown"}, ${role.replace("_", " ")}, round ${turn.round ?? "?"}`,
    }, head, ...body);
  }

  function moderatorCard(event, nameOf) {
    const d = event.decision || {};
    const turn = event.turn || {};
    const who = (turn.speaker && turn.speaker.name) || "Facilitator";
    const next = d.nextParticipantId != null ? nameOf(d.nextParticipantId) : null;
    const decisionText = d.decision === "synthesize" ? "Synthesize" : (next ? `Continue → ${next}` : "Continue");
    const head = el("header", { class: "card-head" },
      gavelIcon(),
      el("span", { class: "speaker" }, who),
      el("span", { class: "badge role role-facilitator" }, "Facilitator"),
      el("span", { class: `badge decision decision-${d.decision || "continue"}` }, decisionText),
      d.fallback ? el("span", { class: "badge fallback", title: `Fallback used: ${d.fallback}` }, "Fallback") : null,
      rehearsalTag(turn),
      el("span", { class: "spacer" }),
      timeLabel(event.ts));
    const rows = el("dl", { class: "decision-body" });
    if (d.question) rows.append(el("dt", {}, "Question"), el("dd", { class: "question" }, contentNode(d.question, [])));
    if (d.reasoning) rows.append(el("dt", {}, "Reasoning"), el("dd", { class: "reasoning" }, d.reasoning));
    if (d.fallback) rows.append(el("dt", {}, "Fallback"), el("dd", { class: "fallback-reason" }, String(d.fallback)));
    return el("li", {
      class: `tcard moderator ${d.fallback ? "has-fallback" : ""}`,
      "data-seq": event.seq, "data-kind": "moderator", "data-turn-id": turn.id,
      "aria-label": `Facilitator decision: ${decisionText}`,
    }, head, rows);
  }

  function synthesisCard(event) {
    const turn = event.turn || {};
    const who = (turn.speaker && turn.speaker.name) || "Facilitator";
    return el("li", { class: "tcard synthesis", "data-seq": event.seq, "data-kind": "synthesis", "data-turn-id": turn.id },
      el("header", { class: "card-head" }, gavelIcon(), el("span", { class: "speaker" }, who),
        el("span", { class: "badge role role-facilitator" }, "Synthesis"), rehearsalTag(turn), el("span", { class: "spacer" }), timeLabel(event.ts)),
      el("p", { class: "muted small" }, "The facilitator wrote the conclusion (shown above)."));
  }

  function statusLine(event, previous) {
    const labels = window.Convene.STATUS_LABELS;
    if (previous && previous === event.status) return null;
    return el("li", { class: "status-line", "data-seq": event.seq, "data-kind": "status" },
      el("span", { class: "muted small" }, `Status: ${labels[event.status] || event.status}`));
  }

  // A small, safe Markdown subset for the conclusion: headings, lists, paragraphs, code
  // blocks, **bold** and `code`. Built as DOM nodes from text; never innerHTML.
  function inlineNodes(text) {
    const nodes = [];
    const pattern = /(\*\*[^*]+\*\*|`[^`]+`)/g;
    let last = 0;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (match.index > last) nodes.push(text.slice(last, match.index));
      const token = match[0];
      nodes.push(token.startsWith("**") ? el("strong", {}, token.slice(2, -2)) : el("code", {}, token.slice(1, -1)));
      last = match.index + token.length;
    }
    if (last < text.length) nodes.push(text.slice(last));
    return nodes;
  }

  function markdownNode(text) {
    const box = el("div", { class: "markdown" });
    let list = null;
    let para = null;
    let code = null;
    const close = () => { list = null; para = null; };
    for (const raw of String(text || "").split("\n")) {
      if (/^\s*```/.test(raw)) {
        if (code) { code = null; } else { close(); code = el("code"); box.append(el("pre", {}, code)); }
        continue;
      }
      if (code) { code.append(`${raw}\n`); continue; }
      const line = raw.trimEnd();
      let m;
      if (!line.trim()) { close(); continue; }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        close();
        box.append(el(`h${Math.min(6, m[1].length + 3)}`, {}, inlineNodes(m[2])));
      } else if ((m = /^\s*(?:[-*+]|(\d{1,3})[.)])\s+(.*)$/.exec(line))) {
        para = null;
        const tag = m[1] ? "ol" : "ul";
        if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); box.append(list); }
        list.append(el("li", {}, inlineNodes(m[2])));
      } else {
        list = null;
        if (!para) { para = el("p"); box.append(para); } else { para.append(el("br")); }
        para.append(...inlineNodes(line));
      }
    }
    return box;
  }

  window.ConveneRender = { markdownNode, participantCard, moderatorCard, synthesisCard, statusLine, contentNode, gavelIcon };
})();
