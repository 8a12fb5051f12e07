// The one Markdown renderer of the pages: turns, decisions, the conclusion and a room's topic are
// Markdown written by models and people. markdown-it parses it with raw HTML off (a "<script>" stays
// text), images off (they would load from anywhere), and links limited to http(s) and mailto; DOMPurify
// then keeps only the tags and attributes listed below. The result is a DOM node, never a string put
// into the page. A page that uses it loads vendor/markdown-it.min.js and vendor/purify.min.js first;
// without them the text is shown as it is.
(function () {
  "use strict";
  const { el } = window.Convene;

  const KEY_TO_TYPE = { VOTE: "vote", Q: "question", TODO: "todo", DECISION: "decision", ASSIGNED: "assigned", DONE: "done", CONCERN: "concern" };
  // As the server reads mentions (facilitation/deliberation/markers.py): an alias is a slug, so it may
  // start with a digit, "-" or "_"; a dotted tail is an address, and "@-" alone no name.
  const MENTION = /(^|[^\w@.`/])@([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)/g;
  const ALLOWED_TAGS = ["p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "a", "table", "thead", "tbody", "tr", "th", "td"];
  // On one line (inlineMarkdownNode): emphasis, code and links only.
  const INLINE_TAGS = ["strong", "em", "del", "s", "code", "a"];
  const ALLOWED_ATTR = ["href", "title", "start", "rel", "target"];
  const SAFE_LINK = /^(?:https?:|mailto:)/i;
  const MARKER_START = /^\s*(?:\*\*|__)?(VOTE|Q|TODO|DECISION|ASSIGNED|DONE|CONCERN)(?:\*\*|__)?\s*:/i;
  const FENCE = /^\s{0,3}(```|~~~)/;
  const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])\s+/;
  // What starts a block (heading, quote, list item) and a line that is only a rule or a setext underline.
  const BLOCK_START = /^\s{0,3}(?:#{1,6}(?=\s|$)\s*|>\s?|[-*+]\s+|\d{1,9}[.)]\s+)+/;
  const RULE_LINE = /^\s{0,3}(?:[-*_=]\s*){3,}$/;
  let parser = null;

  function markdownParser() {
    if (parser || typeof window.markdownit !== "function") return parser;
    parser = window.markdownit({ html: false, linkify: true, breaks: true, typographer: false });
    parser.disable(["image"]);
    parser.validateLink = (url) => SAFE_LINK.test(String(url).trim());
    const shift = (tokens, idx, options, env, self) => {
      const token = tokens[idx];
      const level = Math.min(6, Number(token.tag.slice(1)) + ((env && env.headingShift) || 0));
      token.tag = `h${level}`;
      return self.renderToken(tokens, idx, options);
    };
    parser.renderer.rules.heading_open = shift;
    parser.renderer.rules.heading_close = shift;
    parser.renderer.rules.link_open = (tokens, idx, options, env, self) => {
      tokens[idx].attrSet("rel", "nofollow noopener noreferrer");
      tokens[idx].attrSet("target", "_blank");
      return self.renderToken(tokens, idx, options);
    };
    return parser;
  }

  // A marker line ("DECISION: ...") that sits inside a paragraph becomes its own paragraph,
  // so it can be highlighted as one block. Fenced code is left alone.
  function isolateMarkerLines(text) {
    const out = [];
    let fence = null;
    for (const line of String(text || "").split("\n")) {
      const f = FENCE.exec(line);
      if (f) fence = fence === null ? f[1] : (f[1] === fence ? null : fence);
      const marker = fence === null && !f && MARKER_START.test(line.replace(/^\s*(?:>\s*)*/, "")) && !LIST_ITEM.test(line);
      if (marker && out.length && out[out.length - 1].trim() !== "") out.push("");
      out.push(line);
      if (marker) out.push("");
    }
    return out.join("\n");
  }

  // DOMPurify holds every attribute it does not know as safe to the link pattern: "_blank", a rel's
  // words, a list's start and a title are not links, so they are named as safe (they carry no URL).
  function sanitize(html, tags = ALLOWED_TAGS) {
    if (!window.DOMPurify) return null;
    return window.DOMPurify.sanitize(html, {
      ALLOWED_TAGS: tags, ALLOWED_ATTR, ALLOW_DATA_ATTR: false, ALLOW_ARIA_ATTR: false,
      ALLOWED_URI_REGEXP: SAFE_LINK, ADD_URI_SAFE_ATTR: ["target", "rel", "start", "title"], RETURN_DOM_FRAGMENT: true,
    });
  }

  // Blocks that start with a marker keyword get its class; the keyword stands out.
  function highlightMarkers(root) {
    for (const block of root.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6")) {
      if (block.tagName === "LI" && block.querySelector(":scope > p")) continue; // its paragraphs are marked
      const match = MARKER_START.exec(block.textContent);
      if (!match) continue;
      const type = KEY_TO_TYPE[match[1].toUpperCase()];
      block.classList.add("marker", `marker-${type}`);
      block.dataset.marker = type;
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      let first = walker.nextNode();
      while (first && !first.nodeValue.trim()) first = walker.nextNode();
      if (!first) continue;
      const holder = first.parentElement;
      if (holder !== block && /^(STRONG|B)$/.test(holder.tagName) && /^\s*[A-Za-z]+\s*:?\s*$/.test(holder.textContent)) {
        holder.classList.add("marker-key");
        continue;
      }
      const own = MARKER_START.exec(first.nodeValue);
      if (!own) continue;
      const rest = first.splitText(own[0].length);
      const key = el("strong", { class: "marker-key" }, first.nodeValue.trim());
      first.replaceWith(key);
      if (!rest.nodeValue.startsWith(" ")) rest.nodeValue = ` ${rest.nodeValue}`;
    }
  }

  // @alias in text (not in code or links) is emphasised.
  function highlightMentions(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement && node.parentElement.closest("code, pre, a") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.nodeValue.includes("@")) nodes.push(node);
    for (const node of nodes) {
      const line = node.nodeValue;
      const parts = [];
      let last = 0;
      MENTION.lastIndex = 0;
      let match;
      while ((match = MENTION.exec(line)) !== null) {
        if (match[2].includes(".") || !/[A-Za-z0-9]/.test(match[2])) continue;
        const start = match.index + match[1].length;
        parts.push(line.slice(last, start), el("span", { class: "mention" }, `@${match[2]}`));
        last = start + match[2].length + 1;
      }
      if (!parts.length) continue;
      parts.push(line.slice(last));
      node.replaceWith(...parts.filter((p) => p !== ""));
    }
  }

  // Markdown as a sanitized block (a <div>), markers and @mentions highlighted.
  function markdownNode(text, { headingShift = 3, className = "markdown" } = {}) {
    const box = el("div", { class: className });
    const md = markdownParser();
    const fragment = md ? sanitize(md.render(isolateMarkerLines(text), { headingShift })) : null;
    if (!fragment) {
      box.classList.add("plain");
      box.textContent = String(text || "");
      return box;
    }
    box.append(fragment);
    highlightMarkers(box);
    highlightMentions(box);
    return box;
  }

  // Markdown on one line (a <span>), where a block would break the layout (a row of the list):
  // the lines are joined, what starts a block (a heading's "#", a quote's ">", a list's "-" or "1.")
  // is left out, fences and rules are dropped; emphasis, code and safe links stay.
  function oneLine(text) {
    return String(text || "").split("\n")
      .filter((line) => !FENCE.test(line) && !RULE_LINE.test(line))
      .map((line) => line.replace(BLOCK_START, "").trim())
      .filter(Boolean).join(" ");
  }

  function inlineMarkdownNode(text, { className = "markdown one-line" } = {}) {
    const box = el("span", { class: className });
    const line = oneLine(text);
    const md = markdownParser();
    const fragment = md ? sanitize(md.renderInline(line), INLINE_TAGS) : null;
    if (!fragment) {
      box.classList.add("plain");
      box.textContent = line;
      return box;
    }
    box.append(fragment);
    highlightMentions(box);
    return box;
  }

  window.ConveneMarkdown = { markdownNode, inlineMarkdownNode, highlightMarkers, highlightMentions };
})();
