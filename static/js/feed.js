// The live feed of one campaign: events in seq order, exactly once, whatever the connection does.
//
// It prefers the WebSocket (/ws/campaigns/<id>/?after=<seq>, docs/websocket.md) and falls back
// to polling the REST log (GET …/events/?after=<seq>) when the socket cannot be opened. Either
// way it keeps `lastSeq`, repairs a gap with GET …/events/?after=&until= before applying what
// came after it, reconnects with backoff (and at once when the tab comes back or the network
// returns), and reports its state — "connecting", "live", "offline" — for the indicator.
//
// It is also a witness (docs/websocket.md, "Witnesses"): it keeps the last (seq, hash) it saw in
// localStorage, reconnects (and polls) with ?after=<seq>:<hash>, and checks that every event
// links to the one before it. When the server answers `history_changed` (the log no longer holds
// what this browser saw: a restored backup, a rewrite), or an event does not link, it forgets the
// witness, reloads and the page says that the history changed.

const PAGE = 1000;
const CHANGED = "tc-history-changed";

function readWitness(key) {
  try {
    const value = JSON.parse(localStorage.getItem(key) || "null");
    if (value && Number.isInteger(value.seq) && /^[0-9a-f]{64}$/.test(value.hash)) return value;
  } catch {
    /* storage unavailable or corrupt: no witness */
  }
  return null;
}

// What a reload must tell the user: the history this browser saw changed (set just before it).
export function takeHistoryChanged(key) {
  try {
    const value = sessionStorage.getItem(`${CHANGED}:${key}`);
    sessionStorage.removeItem(`${CHANGED}:${key}`);
    return value ? JSON.parse(value) : null;
  } catch {
    return null;
  }
}

export class Feed {
  constructor({ api, wsPath, after = 0, witness, onEvents, onStatus, onPresence, pollMs = 1000 }) {
    this.api = api;
    this.wsPath = wsPath;
    this.lastSeq = after;
    this.witnessKey = witness || null;
    // The last (seq, hash) whose successor must link to it; starts at what this browser kept.
    this.link = this.witnessKey ? readWitness(this.witnessKey) : null;
    this.resumeFrom = this.link; // the first connection asks for the chain from the witness
    this.onEvents = onEvents || (() => {});
    this.onStatus = onStatus || (() => {});
    this.onPresence = onPresence || (() => {});
    this.pollMs = pollMs;
    this.status = null;
    this.attempt = 0;
    this.socket = null;
    this.socketWorks = null; // null: not tried yet; true once a socket opened; false: refused
    this.timer = null;
    this.queue = Promise.resolve();
    this.stopped = false;
  }

  start() {
    this.setStatus("connecting");
    // The browser knows at once when its network went: the page says so, and drops its socket
    // (a dead network may hold its close event back for minutes); back online, it reconnects.
    addEventListener("offline", () => this.abandon(this.socket));
    addEventListener("online", () => this.kick());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.kick();
    });
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.socket) this.socket.close();
  }

  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    this.onStatus(status);
  }

  // Try again now (the network came back, the tab became visible).
  kick() {
    if (this.stopped) return;
    if (this.socket && this.socket.readyState <= 1) {
      this.catchUp().catch(() => {});
      return;
    }
    clearTimeout(this.timer);
    this.connect();
  }

  // Give up on a socket without waiting for its close event: the page says it is offline now,
  // and reconnects (a new socket catches up from the last event seen).
  abandon(socket) {
    if (this.stopped) return;
    this.setStatus("offline");
    if (!socket || this.socket !== socket) return;
    this.socket = null;
    clearInterval(this.pinger);
    socket.close();
    this.onPresence(null);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), this.backoff());
  }

  connect() {
    if (this.stopped) return;
    if (this.wsPath && "WebSocket" in window && this.socketWorks !== false) {
      this.openSocket();
    } else {
      this.poll();
    }
  }

  backoff() {
    // 0.5 s, 1 s, 2 s, 4 s, then every 5 s, with a little jitter so a table does not stampede.
    const base = Math.min(5000, 500 * 2 ** this.attempt);
    this.attempt += 1;
    return base * (0.8 + Math.random() * 0.4);
  }

  // --- polling the REST log ---------------------------------------------------------------

  async poll() {
    clearTimeout(this.timer);
    if (this.stopped) return;
    try {
      await this.catchUp();
      this.attempt = 0;
      this.setStatus("live");
      // A socket that never opened is retried now and then: the server may have gained one.
      if (this.socketWorks === false && Math.random() < 0.02) this.socketWorks = null;
      this.timer = setTimeout(() => this.connect(), this.pollMs);
    } catch (error) {
      this.setStatus("offline");
      this.timer = setTimeout(() => this.connect(), this.backoff());
    }
  }

  // Everything after lastSeq from the REST log, page by page. Like the socket, the REST log
  // takes after=<seq>:<hash> and answers 409 history_changed when it no longer holds what this
  // browser saw: the first request after a (re)load asks from the witness kept in localStorage
  // (the events up to lastSeq are only link-checked), every later poll from the last event.
  catchUp() {
    return this.serial(async () => {
      for (;;) {
        const link = this.link && this.link.seq === this.lastSeq ? this.link : null;
        const from = this.resumeFrom || link;
        const after = from ? `${from.seq}:${from.hash}` : `${this.lastSeq}`;
        let events;
        try {
          events = await this.api.get(`events/?after=${after}&limit=${PAGE}`);
        } catch (error) {
          if (error.status === 409 && error.body && error.body.code === "history_changed") {
            this.historyChanged(error.body);
            return;
          }
          throw error;
        }
        this.apply(events);
        if (this.stopped) return;
        // Still below lastSeq (a long way from an old witness): carry on from the last link.
        this.resumeFrom = this.link && this.link.seq < this.lastSeq ? this.link : null;
        if (events.length < PAGE) return;
      }
    });
  }

  // --- the socket -------------------------------------------------------------------------

  openSocket() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const from = this.resumeFrom || (this.link && this.link.seq === this.lastSeq ? this.link : null);
    const after = from ? `${from.seq}:${from.hash}` : `${this.lastSeq}`;
    const url = `${scheme}://${location.host}${this.wsPath}?after=${after}`;
    let opened = false;
    let socket;
    try {
      socket = new WebSocket(url);
    } catch {
      this.socketWorks = false;
      this.poll();
      return;
    }
    this.socket = socket;
    socket.addEventListener("open", () => {
      // The server replays everything after ?after= before the live events (docs/websocket.md).
      opened = true;
      this.resumeFrom = null;
      this.socketWorks = true;
      this.attempt = 0;
      this.failedWhileUp = 0;
      this.setStatus("live");
      this.keepAlive(socket);
    });
    socket.addEventListener("message", (message) => {
      this.heardAt = Date.now();
      this.receive(message.data);
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return; // abandoned or replaced: its successor decides
      clearInterval(this.pinger);
      this.socket = null;
      if (this.stopped) return;
      if (event.code === 4401 || event.code === 4403) {
        // Signed out, or no longer a member: the page itself says what to do next.
        this.setStatus("offline");
        setTimeout(() => location.reload(), 1500);
        return;
      }
      if (!opened && this.socketWorks !== true) {
        // No socket here (an older server, a proxy without WebSockets): poll instead.
        this.socketWorks = false;
        this.poll();
        return;
      }
      this.onPresence(null);
      if (opened) {
        this.setStatus("offline");
        this.timer = setTimeout(() => this.connect(), this.backoff());
      } else {
        this.whileDown();
      }
    });
  }

  // The socket would not reconnect. Ask the REST log: if the server answers, the page is caught
  // up and live again even while the browser holds its WebSocket retries back (Chromium delays
  // them after failures), and the socket is tried again soon; if not, back off.
  async whileDown() {
    clearTimeout(this.timer);
    let answered = false;
    try {
      await this.catchUp();
      answered = true;
    } catch {
      /* still down */
    }
    if (this.stopped || (this.socket && this.socket.readyState <= 1)) return;
    if (answered) {
      this.setStatus("live");
      this.failedWhileUp = (this.failedWhileUp || 0) + 1;
      if (this.failedWhileUp > 60) this.socketWorks = false; // the socket is gone for good: poll
      this.timer = setTimeout(() => this.connect(), this.pollMs);
    } else {
      this.setStatus("offline");
      this.timer = setTimeout(() => this.connect(), this.backoff());
    }
  }

  // A connection can die without a close (a laptop lid, a NAT timeout): ping now and then, and
  // when nothing at all came back for a while, drop the socket and reconnect.
  keepAlive(socket) {
    this.heardAt = Date.now();
    clearInterval(this.pinger);
    this.pinger = setInterval(() => {
      if (socket.readyState !== 1) return;
      if (Date.now() - this.heardAt > 45000) {
        this.abandon(socket);
        return;
      }
      socket.send(JSON.stringify({ type: "ping" }));
    }, 20000);
  }

  receive(raw) {
    let message;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (message && message.type === "history_changed") {
      this.historyChanged(message);
      return;
    }
    if (message && message.type === "error" && message.field === "after") {
      // The log is behind what this page saw (a restored database): start afresh.
      location.reload();
      return;
    }
    const { events, presence } = readMessage(message);
    if (presence) this.onPresence(presence);
    if (events.length) this.serial(() => this.ingest(events)).catch(() => this.kick());
  }

  send(message) {
    if (this.socket && this.socket.readyState === 1) this.socket.send(JSON.stringify(message));
  }

  // --- ordering ---------------------------------------------------------------------------

  // One thing at a time: a gap repair finishes before the events after it are applied.
  serial(task) {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  async ingest(events) {
    events.sort((a, b) => a.seq - b.seq);
    const first = events.find((event) => event.seq > this.lastSeq);
    if (!first) return;
    if (first.seq > this.lastSeq + 1) {
      // A gap: fetch the missing stretch before applying anything after it.
      let after = this.lastSeq;
      while (after < first.seq - 1) {
        const missing = await this.api.get(
          `events/?after=${after}&until=${first.seq - 1}&limit=${PAGE}`,
        );
        if (!missing.length) break;
        this.apply(missing);
        after = this.lastSeq;
      }
    }
    this.apply(events);
  }

  // The witness's side of the chain: an event must carry the hash this browser saw for its seq,
  // and the next one must link to it.
  linked(event) {
    if (typeof event.hash !== "string") return true;
    const link = this.link;
    if (link && event.seq === link.seq && event.hash !== link.hash) return false;
    if (link && event.seq === link.seq + 1 && event.prev_hash && event.prev_hash !== link.hash) {
      return false;
    }
    if (!link || event.seq > link.seq) this.link = { seq: event.seq, hash: event.hash };
    return true;
  }

  historyChanged(message) {
    if (this.stopped) return;
    this.stop();
    try {
      if (this.witnessKey) {
        localStorage.removeItem(this.witnessKey);
        const seen = { seq: message.seq ?? null, at: new Date().toISOString() };
        sessionStorage.setItem(`${CHANGED}:${this.witnessKey}`, JSON.stringify(seen));
      }
    } catch {
      /* storage unavailable: the reload still starts afresh */
    }
    location.reload();
  }

  apply(events) {
    const fresh = [];
    for (const event of events.slice().sort((a, b) => a.seq - b.seq)) {
      if (!this.linked(event)) {
        this.historyChanged({ seq: event.seq });
        return;
      }
      if (event.seq <= this.lastSeq) continue;
      // The log is gapless (hidden events are stubs that keep their seq): a hole left after a
      // failed repair stops here, and the next catch-up fills it.
      if (event.seq !== this.lastSeq + 1) break;
      fresh.push(event);
      this.lastSeq = event.seq;
    }
    if (this.link) this.remember(this.link);
    if (fresh.length) this.onEvents(fresh);
  }

  remember(link) {
    if (!this.witnessKey) return;
    try {
      localStorage.setItem(this.witnessKey, JSON.stringify(link));
    } catch {
      /* storage full or disabled: this page still checks links while it is open */
    }
  }
}

// The socket's messages (docs/websocket.md): events one by one or in batches, and presence.
export function readMessage(message) {
  const events = [];
  let presence = null;
  const take = (item) => {
    if (item && typeof item.seq === "number" && typeof item.type === "string") events.push(item);
  };
  if (Array.isArray(message)) message.forEach(take);
  else if (message && typeof message === "object") {
    if (Array.isArray(message.events)) message.events.forEach(take);
    if (message.event) take(message.event);
    if (message.type && typeof message.seq === "number") take(message);
    const who = message.presence || (message.type === "presence" ? message : null);
    if (who) presence = who.users || who.members || who.online || who;
  }
  return { events, presence };
}
