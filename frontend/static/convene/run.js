// A facilitation run's cards: its brief (from the room's details, which room.js hands on) and its
// outcome (the artifact, what is missing and who confirmed), kept current from discussion:artifact
// events (room.js re-dispatches every applied event).
(function () {
  "use strict";

  const { request, el, toast, pageData, runState } = window.Convene;
  const { EVENTS } = window.ConveneLive;
  const id = pageData().discussionId;

  function rows(artifact) {
    if (artifact.roles) return Object.entries(artifact.roles).map(([role, person]) => [role, person || "open"]);
    if (artifact.pattern === "decision" || "choice" in artifact) {
      return [["Chosen", artifact.choice || "not yet"], ["Proposed", (artifact.proposals || []).join(", ") || "none"]];
    }
    return (artifact.items || []).map((item, i) => [`${i + 1}.`, `${item.text} (${item.by})`]);
  }

  function show(artifact) {
    const list = document.getElementById("artifact");
    list.replaceChildren();
    for (const [key, value] of rows(artifact)) {
      list.append(el("dt", { text: key }), el("dd", { class: value === "open" ? "muted" : "", text: value }));
    }
    document.getElementById("run-state").textContent = runState(artifact.state);
    if (artifact.state && artifact.state !== "waiting") document.getElementById("run-join").hidden = true;
    const missing = artifact.missing || [];
    document.getElementById("run-missing").textContent = missing.length ? `Still missing: ${missing.join("; ")}` : "";
    const confirmed = artifact.confirmedBy || [];
    const waiting = (artifact.needsConfirmationFrom || []).filter((p) => !confirmed.includes(p));
    document.getElementById("run-confirmed").textContent = confirmed.length || (artifact.done && waiting.length)
      ? `Confirmed by: ${confirmed.join(", ") || "nobody yet"}${waiting.length && artifact.done ? ` · waiting for ${waiting.join(", ")}` : ""}`
      : "";
  }

  // What the run was set up with: the goal's definition of done, the deadline, who gets the result and,
  // for its owner, the command that brings the facilitator into a group.
  function brief(room) {
    const run = room.run;
    if (!run) return;
    const facts = [["Done when", run.definitionOfDone],
                   ["Deadline", new Date(run.deadline).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })],
                   ["Result to", run.reportToText || "nobody"]];
    document.getElementById("run-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
    const join = document.getElementById("run-join");
    const open = Boolean(run.joinCode) && run.state === "waiting";
    join.hidden = !open;
    if (!open) return;
    const command = `/facilitator start ${run.joinCode}`;
    document.getElementById("run-join-command").textContent = command;
    document.getElementById("run-join-teams").textContent = `${pageData().teamsStart || "@Convene facilitator start"} ${run.joinCode}`;
    document.getElementById("run-join-telegram").hidden = !run.telegramLink;
    if (run.telegramLink) document.getElementById("run-join-link").href = run.telegramLink;
    document.getElementById("run-join-copy").onclick = () => navigator.clipboard.writeText(command)
      .then(() => toast("Copied"), () => toast("Select the command and copy it", "error"));
  }

  document.addEventListener("convene:details", (e) => brief(e.detail));  // room.js loaded the room

  document.addEventListener("convene:event", (e) => {
    const event = e.detail.event;
    if (event.type === EVENTS.ARTIFACT && event.artifact) show(event.artifact);
  });
  request("GET", `discussions/${id}/artifact`).then(({ data }) => show(data)).catch(() => {
    document.getElementById("run-state").textContent = "The outcome could not be loaded.";
  });
})();
