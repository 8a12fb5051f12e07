// Sharing a room (owner and staff): who else may read it, or speak in it. The room page and the desk
// both mount it on their #members list and #share-form.
(function () {
  "use strict";
  const { request, el, toast, errorText } = window.Convene;
  const ACCESS = [["viewer", "Viewer"], ["participant", "Participant"]];

  // mount({discussionId, noun, owner}): `noun` names the room in the removal question, `owner()` the owner's
  // name once the page knows it. Returns {load}, which draws the list again.
  function mount({ discussionId, noun, owner }) {
    const list = document.getElementById("members");
    const form = document.getElementById("share-form");
    if (!list || !form) return { load: async () => {} };
    const base = `discussions/${discussionId}/members`;
    const box = document.getElementById("share-error");
    const showError = (message) => { box.textContent = message || ""; box.hidden = !message; };
    const reason = (err) => errorText(err, { access: "Access" });  // "No such user. No active user by that name …"

    async function load() {
      try {
        const { data } = await request("GET", base);
        list.replaceChildren(
          el("li", { class: "member owner" }, el("span", { class: "name" }, owner() || "Owner"), el("span", { class: "muted small" }, "Owner")),
          ...(data || []).map((m) => {
            const select = el("select", { "aria-label": `Access of ${m.username}`, "data-member": m.username },
              ACCESS.map(([v, label]) => el("option", { value: v, selected: v === m.access }, label)));
            select.addEventListener("change", () => share(m.username, select.value));
            const remove = el("button", { type: "button", class: "btn btn-small btn-ghost", "aria-label": `Remove ${m.username}` }, "Remove");
            remove.addEventListener("click", () => unshare(m.username));
            return el("li", { class: "member", "data-username": m.username }, el("span", { class: "name" }, m.username), select, remove);
          }));
        if (!data || !data.length) list.append(el("li", { class: "muted small" }, "Not shared with anyone yet."));
      } catch (err) {
        list.replaceChildren(el("li", { class: "error" }, `Could not load who has access: ${err.message}`));
      }
    }

    async function share(username, access) {
      showError("");
      try {
        await request("POST", base, { username, access });
        toast(`${username} is now a ${access}`);
      } catch (err) {
        showError(reason(err));
      }
      await load();
    }

    async function unshare(username) {
      if (!window.confirm(`Remove ${username}'s access to this ${noun}?`)) return;
      try {
        await request("DELETE", `${base}/${encodeURIComponent(username)}`);
        toast(`${username} no longer has access`);
      } catch (err) {
        showError(reason(err));
      }
      await load();
    }

    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const input = document.getElementById("share-username");
      const username = input.value.trim();
      if (!username) { showError("Enter a username."); input.focus(); return; }
      await share(username, document.getElementById("share-access").value);
      if (box.hidden) input.value = "";
    });
    return { load };
  }

  window.ConveneSharing = { mount };
})();
