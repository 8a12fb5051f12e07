// Your linked chat accounts (GET/DELETE /api/me/chat-identities) and a code to link one more (POST).
(function () {
  "use strict";

  const { request, el, toast } = window.Convene;
  const $ = (selector) => document.querySelector(selector);
  const PLATFORMS = { telegram: "Telegram", teams: "Teams" };

  function fail(err) {
    $("#chats-error").textContent = err.message;
    $("#chats-error").hidden = false;
  }

  async function load() {
    const { data } = await request("GET", "me/chat-identities");
    $("#chats-empty").hidden = data.length > 0;
    $("#chats-list").replaceChildren(...data.map((identity) => {
      const who = [identity.name, identity.username ? `@${identity.username}` : ""].filter(Boolean).join(" ");
      const unlink = el("button", { type: "button", class: "btn btn-small btn-ghost btn-danger" }, "Unlink");
      unlink.addEventListener("click", async () => {
        try {
          await request("DELETE", `me/chat-identities/${identity.id}`);
          toast(`${who || "The account"} is no longer linked`);
          await load();
        } catch (err) { fail(err); }
      });
      return el("li", { "data-identity-id": identity.id },
        el("strong", {}, PLATFORMS[identity.platform] || identity.platform), " ", who || "(no name)", " ", unlink);
    }));
  }

  $("#chats-code").addEventListener("click", async () => {
    try {
      const { data } = await request("POST", "me/chat-identities");
      $("#chats-command").textContent = data.command;
      if ($("#chats-command-teams")) $("#chats-command-teams").textContent = data.teamsCommand;
      $("#chats-telegram").hidden = !data.telegramLink;
      if (data.telegramLink) $("#chats-telegram-link").href = data.telegramLink;
      $("#chats-code-box").hidden = false;
    } catch (err) { fail(err); }
  });
  load().catch(fail);
})();
