// Rendering of timeline cards: participant turns, facilitator decisions, the synthesis.
// Text is Markdown (markdown.js, the shared renderer): rendered, sanitized, then its markers and @mentions highlighted.
(function () {
  "use strict";
  const { el, roleBadge } = window.Convene;
  const { markdownNode, highlightMarkers, highlightMentions } = window.ConveneMarkdown;

  const COLLAPSE_CHARS = 700;

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

  // A turn's content: the same Markdown, with its markers and @mentions highlighted. A message from a
  // Telegram or Teams chat is plain text (its sender wrote no Markdown: "2*3*4" stays as written):
  // paragraphs and line breaks as sent, markers and @mentions highlighted all the same.
  function contentNode(text, { plain = false } = {}) {
    if (!plain) return markdownNode(text, { headingShift: 3, className: "content markdown" });
    const box = el("div", { class: "content markdown plain-text" });
    for (const chunk of String(text || "").split(/\n\s*\n/)) {
      const p = el("p", {});
      chunk.split("\n").forEach((line, i) => { if (i) p.append(el("br", {})); p.append(line); });
      box.append(p);
    }
    highlightMarkers(box);
    highlightMentions(box);
    return box;
  }

  const CHAT_PLATFORMS = ["telegram", "teams"];
  function fromChat(turn) {
    const source = (turn.data || {}).source || {};
    return CHAT_PLATFORMS.includes(source.platform);
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

  // A speaker's name as written on its turn; the room page passes its own (agents of one name told apart).
  const ownName = (speaker) => (speaker && speaker.name) || "Unknown";

  // A pass (NO_RESPONSE): one compact line, not a card.
  function passLine(event, speakerName = ownName) {
    const turn = event.turn || {};
    const speaker = turn.speaker || {};
    const who = speakerName(speaker);
    return el("li", {
      class: "tcard turn turn-pass", "data-seq": event.seq, "data-kind": "pass", "data-turn-id": turn.id,
      "data-speaker-id": speaker.id, "aria-label": `${who} passed, round ${turn.round ?? "?"}`,
    }, el("span", { class: "muted small" }, `${who} passed (nothing to add) · round ${turn.round ?? "?"}`));
  }

  function participantCard(event, speakerName = ownName) {
    const turn = event.turn || {};
    if (turn.data && turn.data.pass) return passLine(event, speakerName);
    const speaker = turn.speaker || {};
    const who = speakerName(speaker);
    const role = speaker.role || "participant";
    const status = turn.status || "ok";
    const head = el("header", { class: "card-head" },
      el("span", { class: "speaker" }, who),
      roleBadge(role),
      // Said before the first round (a comment while the facilitator opens): the opening, as the minutes call it.
      el("span", { class: "muted small" }, turn.round === 0 ? "Opening" : `Round ${turn.round ?? "?"}`),
      rehearsalTag(turn),
      status !== "ok" ? el("span", { class: `badge turn-status turn-${status}` }, status === "timed_out" ? "Timed out" : "Error") : null,
      el("span", { class: "spacer" }),
      timeLabel(event.ts));
    const text = status === "timed_out" && !turn.content ? "No response: the turn timed out." : turn.content;
    const body = collapsible(contentNode(text, { plain: fromChat(turn) }), (text || "").length);
    return el("li", {
      class: `tcard turn role-${role} ${status !== "ok" ? "turn-failed" : ""}`,
      "data-seq": event.seq, "data-kind": "turn", "data-turn-id": turn.id, "data-speaker-id": speaker.id,
      "aria-label": `${who}, ${role.replace("_", " ")}, round ${turn.round ?? "?"}`,
    }, head, ...body);
  }

  function moderatorCard(event, nameOf, speakerName = ownName) {
    const d = event.decision || {};
    const turn = event.turn || {};
    const who = turn.speaker && turn.speaker.name ? speakerName(turn.speaker) : "Facilitator";
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
    if (d.question) rows.append(el("dt", {}, "Question"), el("dd", { class: "question" }, contentNode(d.question)));
    if (d.reasoning) rows.append(el("dt", {}, "Reasoning"), el("dd", { class: "reasoning" }, d.reasoning));
    // The rules that changed the facilitator's answer (a speaker asked for with @, a seat that may not speak...):
    // without them the reasoning above can read as if it chose someone else.
    const corrections = (Array.isArray(d.corrections) ? d.corrections : []).filter((c) => c && c.reason);
    if (corrections.length) {
      rows.append(el("dt", {}, corrections.length === 1 ? "Rule applied" : "Rules applied"),
        el("dd", { class: "corrections" }, ...corrections.map((c) => el("div", {}, String(c.reason)))));
    }
    if (d.fallback) rows.append(el("dt", {}, "Fallback"), el("dd", { class: "fallback-reason" }, String(d.fallback)));
    return el("li", {
      class: `tcard moderator ${d.fallback ? "has-fallback" : ""}`,
      "data-seq": event.seq, "data-kind": "moderator", "data-turn-id": turn.id,
      "aria-label": `Facilitator decision: ${decisionText}`,
    }, head, rows);
  }

  function synthesisCard(event, speakerName = ownName) {
    const turn = event.turn || {};
    const who = turn.speaker && turn.speaker.name ? speakerName(turn.speaker) : "Facilitator";
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

  function phaseLine(event, title) {
    return el("li", { class: "status-line", "data-seq": event.seq, "data-kind": "phase" },
      el("span", { class: "muted small phase-line" }, `Phase: ${title || event.phase}`));
  }

  window.ConveneRender = { markdownNode, participantCard, moderatorCard, synthesisCard, statusLine, phaseLine, contentNode, gavelIcon };
})();
