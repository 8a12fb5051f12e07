// The room's chat groups (owner and staff): a code to link a Telegram group or Teams chat, the
// linked chats, and unlinking (asked twice). Kept current from discussion:link events.
(function () {
  "use strict";

  const { request, el, toast, pageData } = window.Convene;
  const { EVENTS } = window.ConveneLive;
  const id = pageData().discussionId;
  const list = document.getElementById("chat-links");
  const codeBox = document.getElementById("link-code");
  const PLATFORMS = { telegram: "Telegram", teams: "Teams" };

  function row(link) {
    const unlink = el("button", { type: "button", class: "btn btn-small", text: "Unlink" });
    unlink.addEventListener("click", async () => {
      if (unlink.dataset.armed !== "yes") {  // a second click confirms
        unlink.dataset.armed = "yes";
        unlink.textContent = "Confirm unlink";
        unlink.classList.add("btn-danger");
        return;
      }
      unlink.disabled = true;
      try {
        await request("DELETE", `discussions/${id}/links/${link.id}`);
        toast("The chat is no longer linked.");
        load();
      } catch (err) {
        unlink.disabled = false;
        toast(`Could not unlink: ${err.message}`, "error");
      }
    });
    const who = link.linkedBy ? ` · linked by ${link.linkedBy}` : "";
    return el("li", { class: "chat-link", dataset: { linkId: String(link.id) } },
      el("span", { class: "badge" , text: PLATFORMS[link.platform] || link.platform }),
      el("span", { class: "name", text: link.title || link.externalId }),
      el("span", { class: "muted small", text: who }),
      unlink);
  }

  async function load() {
    try {
      const { data } = await request("GET", `discussions/${id}/links`);
      const active = data.filter((l) => l.active);
      list.replaceChildren(...active.map(row));
      if (!active.length) list.append(el("li", { class: "muted", text: "No chat group is linked." }));
    } catch (err) {
      list.replaceChildren(el("li", { class: "error", text: `Could not load the linked chats: ${err.message}` }));
    }
  }

  document.getElementById("btn-link-code").addEventListener("click", async (e) => {
    e.target.disabled = true;
    try {
      const { data } = await request("POST", `discussions/${id}/links`);
      const until = new Date(data.expiresAt).toLocaleTimeString();
      const parts = [el("p", { text: "Add the bot to the group, then send there:" }),
                     el("code", { id: "link-command", text: data.command }),
                     el("p", { class: "small" }, "In a Teams chat, mention the bot: ", el("code", { id: "link-command-teams", text: data.teamsCommand })),
                     el("p", { class: "muted small", text: `The code works once, until ${until}.` })];
      if (data.telegramLink) parts.splice(2, 0, el("p", {}, "Or open ", el("a", { href: data.telegramLink, target: "_blank", rel: "noopener", text: "this Telegram link" }), "."));
      codeBox.replaceChildren(...parts);
      codeBox.hidden = false;
      codeAfter = seen;
    } catch (err) {
      toast(`Could not make a code: ${err.message}`, "error");
    } finally {
      e.target.disabled = false;
    }
  });

  // A link event may come live or replayed (the socket joined, or came back, after it): either way
  // the list is read again, once for a burst of them. A chat linked after the code on show was made
  // used it up (codes work once), so the code goes away.
  let seen = 0;
  let codeAfter = null;
  let loadTimer = null;
  document.addEventListener("convene:event", (e) => {
    const event = e.detail.event;
    seen = Math.max(seen, Number(event.seq) || 0);
    if (event.type !== EVENTS.LINK) return;
    if (event.state === "linked" && codeAfter !== null && Number(event.seq) > codeAfter) {
      codeBox.hidden = true;
      codeAfter = null;
    }
    clearTimeout(loadTimer);
    loadTimer = setTimeout(load, 100);
  });
  load();
})();
