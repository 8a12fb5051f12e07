// The live connection to one discussion: Socket.IO join/replay with exactly-once, in-order delivery.
//
// The client keeps the seq of the last event it applied (lastSeq).
// - On every (re)connect it emits discussion:join {discussionId, lastSeq}; the server enters
//   the socket room first and then reads what came after lastSeq, so nothing falls between.
// - Live events that arrive before the join's answer are held and merged with `missed`.
// - An event with seq <= lastSeq is a duplicate and is dropped.
// - An event that skips ahead (seq > lastSeq + 1) is held; if the gap is not filled
//   shortly, the client joins again to fetch what is missing.
// While the socket is down a page polls REST instead and says so (OfflinePoller, connectionLabel).
(function () {
  "use strict";

  // The names of events and commands come from the server (rooms/events/types.py), rendered
  // into the page as JSON: {events: {TURN: ...}, logged: [...], commands: {JOIN: ...}}.
  const NAMES = JSON.parse(document.getElementById("socket-names").textContent);
  const EVENTS = NAMES.events;
  const COMMANDS = NAMES.commands;
  const EVENT_TYPES = NAMES.logged; // every event that takes a seq: all must be applied in order
  const GAP_WAIT_MS = 800;
  const ACK_TIMEOUT_MS = 10000;

  class LiveDiscussion {
    constructor(discussionId, handlers) {
      this.discussionId = discussionId;
      this.handlers = handlers || {};
      this.lastSeq = 0;
      this.joined = false;
      this.joining = false;
      this.held = new Map();
      this.gapTimer = null;
      this.applied = []; // seqs in the order they were applied (inspected by tests)
      this.socket = null;
      this.rejoining = false;
      this.rejoinTimer = null;
    }

    connect() {
      // Same origin: the session cookie authenticates. Websocket first, polling as fallback.
      this.socket = window.io({ path: "/socket.io/", transports: ["websocket", "polling"], reconnectionDelayMax: 4000 });
      this.socket.on("connect", () => {
        this.rejoining = false;
        this._state("online");
        this.join();
      });
      this.socket.on("disconnect", (reason) => {
        this.joined = false;
        this.joining = false;
        clearTimeout(this.rejoinTimer);  // the next connection joins anew
        this._state("offline", reason);
      });
      this.socket.on("connect_error", (err) => {
        this._state("offline", err && err.message);
        if (err && err.message === "unauthenticated" && this.handlers.onRefused) {
          this.handlers.onRefused({ code: "unauthenticated", error: "Your session has ended. Sign in again." });
        }
      });
      this.socket.io.on("reconnect_attempt", () => this._state("reconnecting"));
      for (const type of EVENT_TYPES) {
        this.socket.on(type, (payload) => this.receive({ type, ...payload }));
      }
      // The owner took this person's access away: the server already stopped the events.
      this.socket.on(EVENTS.REVOKED, (payload) => {
        if (payload && payload.discussionId === this.discussionId && this.handlers.onRefused) {
          this.handlers.onRefused({ code: "revoked", error: "You no longer have access to this discussion." });
        }
      });
      // The owner changed this person's access (viewer <-> participant): the page shows what it now allows.
      this.socket.on(EVENTS.ACCESS, (payload) => {
        if (payload && payload.discussionId === this.discussionId && this.handlers.onAccess) this.handlers.onAccess(payload.access);
      });
      return this;
    }

    _state(state, detail) {
      if (this.handlers.onConnection) this.handlers.onConnection(state, detail);
    }

    join() {
      if (!this.socket || !this.socket.connected || this.joining) return;
      this.joining = true;
      this.joined = false;
      const sentFor = this.socket.id;
      this.socket.timeout(ACK_TIMEOUT_MS).emit(COMMANDS.JOIN, { discussionId: this.discussionId, lastSeq: this.lastSeq }, (err, ack) => {
        this.joining = false;
        if (!this.socket.connected || this.socket.id !== sentFor) return; // a newer connection joins again
        if (err || !ack) {
          this._rejoinLater(1, "join timed out");
          return;
        }
        if (!ack.ok && ack.code === "throttled") {
          // Too many requests for now, not a refusal: join again once the server says it may (the page polls meanwhile).
          const wait = Math.min(Math.max(Math.ceil(Number(ack.retryAfter)) || 1, 1), 60);
          this._rejoinLater(wait, `busy: joining again in ${wait} s`);
          return;
        }
        if (!ack.ok) {
          if (this.handlers.onRefused) this.handlers.onRefused(ack);
          return;
        }
        if (this.rejoining) {  // a join that failed before this one said so: the connection is live again
          this.rejoining = false;
          this._state("online");
        }
        // The status in the answer was read before `missed`: apply it first, then the events.
        if (this.handlers.onJoined) this.handlers.onJoined(ack);
        for (const event of ack.missed || []) this._accept(event, true);
        if (typeof ack.seq === "number" && !ack.more) this.lastSeq = Math.max(this.lastSeq, ack.seq);
        this.joined = true;
        if (ack.more) {
          this.join();
          return;
        }
        this._drain();
      });
    }

    _rejoinLater(seconds, detail) {
      this.rejoining = true;
      this._state("error", detail);
      clearTimeout(this.rejoinTimer);
      this.rejoinTimer = setTimeout(() => this.join(), seconds * 1000);
    }

    // A live event from the server.
    receive(event) {
      if (typeof event.seq !== "number" || event.discussionId !== this.discussionId) return;
      if (event.seq <= this.lastSeq) return; // already applied
      this.held.set(event.seq, event);
      if (this.joined) this._drain();
    }

    // Apply held events in order while they are contiguous; resync when a gap persists.
    _drain() {
      for (const seq of [...this.held.keys()]) {
        if (seq <= this.lastSeq) this.held.delete(seq);
      }
      while (this.held.has(this.lastSeq + 1)) {
        const event = this.held.get(this.lastSeq + 1);
        this.held.delete(event.seq);
        this._accept(event, false);
      }
      clearTimeout(this.gapTimer);
      this.gapTimer = null;
      if (this.held.size > 0) {
        this.gapTimer = setTimeout(() => {
          this.gapTimer = null;
          if (this.held.size > 0 && this.joined) this.join();
        }, GAP_WAIT_MS);
      }
    }

    _accept(event, replayed) {
      if (event.seq <= this.lastSeq) return;
      this.lastSeq = event.seq;
      this.held.delete(event.seq);
      this.applied.push(event.seq);
      if (this.handlers.onEvent) this.handlers.onEvent(event, replayed);
    }

    // Events fetched over REST while the socket is down: applied in seq order, duplicates dropped.
    // (REST lists turns only; status changes come with the discussion's details.)
    applyFetched(events) {
      for (const event of [...events].sort((a, b) => a.seq - b.seq)) this._accept(event, true);
    }

    // Controls: pause | resume | stop | conclude. Resolves to the server's acknowledgement.
    control(verb) {
      return new Promise((resolve) => {
        if (!this.socket || !this.socket.connected) {
          resolve({ ok: false, error: "Not connected.", code: "offline" });
          return;
        }
        const command = COMMANDS[String(verb).toUpperCase()];
        if (!command) {
          resolve({ ok: false, error: `Unknown control ${verb}.`, code: "invalid" });
          return;
        }
        this.socket.timeout(ACK_TIMEOUT_MS).emit(command, { discussionId: this.discussionId }, (err, ack) => {
          resolve(err ? { ok: false, error: "The server did not answer.", code: "timeout" } : ack);
        });
      });
    }
  }

  // --- without the socket: polling, and the words for it ------------------------------------
  // A live page that cannot reach Socket.IO reads what it shows over REST every few seconds and says
  // so: "Live updates unavailable, retrying · last update 10:42:07" (the room page's words).
  const CONNECTION_LABELS = { online: "Live", offline: "Offline: reconnecting…", reconnecting: "Reconnecting…",
                              connecting: "Connecting…", error: "Connection problem" };

  function clock(date) {
    return date ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }) : "never";
  }

  // The connection's label: the live state in words, or that the page polls and when it last read.
  function connectionLabel(state, polling, lastUpdate) {
    return polling ? `Live updates unavailable, retrying · last update ${clock(lastUpdate)}` : CONNECTION_LABELS[state] || state;
  }

  // Polls while the socket is down: tell it every connection state (`connection(state)`); a state other
  // than "online" that lasts graceMs starts `poll()` every intervalMs, "online" stops it. One poll at a
  // time; `lastUpdate` is when one last succeeded. `onChange()` after each poll and each start or stop
  // (redraw the label); `onError(err)` when a poll fails (polling goes on).
  class OfflinePoller {
    constructor(poll, { intervalMs = 3000, graceMs = 3000, onChange, onError } = {}) {
      Object.assign(this, { poll, intervalMs, graceMs, onChange, onError });
      this.state = "connecting";
      this.lastUpdate = null;
      this.timer = null;
      this.grace = null;
      this.running = false;
      this.stopped = false;
    }

    get polling() { return this.timer !== null && this.state !== "online"; }

    connection(state) {
      this.state = state;
      if (state === "online") this._halt();
      else if (!this.stopped && this.timer === null && this.grace === null) {
        this.grace = setTimeout(() => {
          this.grace = null;
          if (this.state !== "online" && !this.stopped) this._start();
        }, this.graceMs);
      }
      this._changed();
    }

    // Read successfully by other means (the first load, a refresh after an action): counts as an update.
    touched() { this.lastUpdate = new Date(); }

    // For good (access refused): no more polls.
    stop() {
      this.stopped = true;
      this._halt();
    }

    _start() {
      if (this.timer !== null) return;
      this.timer = setInterval(() => this._once(), this.intervalMs);
      this._changed();
      this._once();
    }

    _halt() {
      clearTimeout(this.grace);
      this.grace = null;
      const was = this.timer !== null;
      clearInterval(this.timer);
      this.timer = null;
      if (was) this._changed();
    }

    async _once() {
      if (this.running) return;
      this.running = true;
      try {
        await this.poll();
        this.lastUpdate = new Date();
      } catch (err) {
        if (this.onError) this.onError(err);
      } finally {
        this.running = false;
      }
      this._changed();
    }

    _changed() { if (this.onChange) this.onChange(this); }
  }

  window.ConveneLive = { LiveDiscussion, EVENT_TYPES, EVENTS, COMMANDS, OfflinePoller, connectionLabel, clock, CONNECTION_LABELS };
})();
