// What the GM dashboard and the player page share: the table's state, the live feed wired to it,
// the feed list, the screen-reader announcements, the connection indicator and the follow-ups.
import { EVENT, FOLLOWUP_EVENTS } from "./events.js";
import { makeApi, errorText } from "./api.js";
import { $, clear, debounce, h, jsonScript } from "./dom.js";
import { Feed, takeHistoryChanged } from "./feed.js";
import { FeedList } from "./feedlist.js";
import { t } from "./i18n.js";
import { announcement, checkItem, followups, markerItem } from "./render.js";
import { rattle, wireSoundToggle } from "./sound.js";

export class Table {
  constructor() {
    const data = jsonScript("table-data");
    this.data = data;
    this.api = makeApi(data.api);
    this.campaign = data.campaign;
    this.me = data.me;
    this.isGm = data.me.role === "gm";
    this.characters = data.characters;
    this.members = data.members;
    this.state = data.state;
    this.calls = [];
    this.presence = null;
    this.usernames = new Map(data.members.map((m) => [m.user_id, m.username]));
    this.checks = new Map(data.checks.map((c) => [c.seq, c]));
    this.markers = new Map();
    for (const event of data.markers) this.markers.set(event.seq, event);
    this.listeners = {};
    this.feedEl = $("#feed");
    this.announcer = $("#announcer");
    this.toasts = $("#toasts");
    this.refresh = {
      state: this.refresher(async () => {
        this.state = await this.api.get("state/");
        this.stateAt = performance.now();
      }, "state"),
      characters: this.refresher(async () => (this.characters = await this.api.get("characters/")), "characters"),
      members: this.refresher(async () => {
        this.members = await this.api.get("members/");
        for (const m of this.members) this.usernames.set(m.user_id, m.username);
      }, "members"),
      campaign: this.refresher(async () => (this.campaign = await this.api.get("")), "campaign"),
      calls: this.refresher(async () => (this.calls = await this.api.get("calls/")), "calls"),
    };
  }

  // Listeners by topic: "state", "characters", "members", "campaign", "calls", "checks".
  on(topic, fn) {
    (this.listeners[topic] = this.listeners[topic] || []).push(fn);
  }

  emit(topic) {
    for (const fn of this.listeners[topic] || []) fn(this);
  }

  refresher(load, topic) {
    return debounce(async () => {
      try {
        await load();
        this.emit(topic);
        if (topic === "state" || topic === "characters" || topic === "campaign") this.refreshControls();
      } catch (error) {
        // The feed's own reconnection reports the outage; the next event retries this.
      }
    }, 150);
  }

  start() {
    this.startFeed();
    this.refresh.calls();
    const conn = $("#conn");
    const witness = `tc-witness:${this.campaign.id}`;
    const changed = takeHistoryChanged(witness);
    if (changed) this.alarm(t("history_changed"));
    this.feed = new Feed({
      api: this.api,
      wsPath: this.data.ws,
      after: this.campaign.head_seq,
      witness,
      onEvents: (events) => this.receive(events),
      onStatus: (status) => {
        if (conn) {
          conn.dataset.state = status;
          $(".conn-text", conn).textContent = t(`conn_${status}`);
        }
        if (status === "live") {
          // After an outage: anything may have changed.
          if (this.wasOffline) Object.values(this.refresh).forEach((fn) => fn());
          this.wasOffline = false;
        } else if (status === "offline") {
          this.wasOffline = true;
        }
      },
      onPresence: (presence) => {
        this.presence = presence;
        this.emit("presence");
      },
    });
    this.feed.start();
  }

  // The log no longer holds what this browser saw before (docs/websocket.md, "Witnesses").
  alarm(text) {
    const banner = h("div", { class: "history-alarm", role: "alert" }, text);
    document.querySelector("main")?.prepend(banner);
  }

  // --- events from the feed ---------------------------------------------------------------

  receive(events) {
    const touched = new Set();
    const changed = [];
    for (const event of events) {
      const type = event.type;
      this.usernames.set(event.actor?.id, event.actor?.username || this.usernames.get(event.actor?.id));
      if (type === EVENT.CHECK_ROLLED) {
        const check = event.redacted ? stubFromEvent(event) : checkFromEvent(event);
        if (!this.checks.has(check.seq)) this.checks.set(check.seq, { ...check, receivedAt: performance.now() });
        changed.push(check.seq);
        this.announce(this.checks.get(check.seq));
        touched.add("state");
        if (!event.redacted && event.payload.call_id) touched.add("calls");
        if (!event.redacted && event.payload.system === "cofd") touched.add("characters");
      } else if (FOLLOWUP_EVENTS.includes(type)) {
        if (!event.redacted) this.applyFollowup(event);
        changed.push(event.payload?.check_seq);
        touched.add("state").add("characters");
      } else if (type === EVENT.CHECK_REVEALED) {
        this.reload(event.payload?.check_seq);
        touched.add("state");
      } else if (type === EVENT.CHECK_CALLED || type === EVENT.CHECK_CALL_CLOSED) {
        touched.add("calls");
      } else if (/^(session|chapter|scene)\./.test(type)) {
        touched.add("campaign").add("state");
      } else if (type.startsWith("member.")) {
        touched.add("members");
      } else if (type.startsWith("character.")) {
        touched.add("characters").add("state");
      } else if (type.startsWith("campaign.")) {
        touched.add("campaign");
      } else if (type === EVENT.TASK_RESET) {
        touched.add("state");
      }
      if (markerItem(event, this.context())) {
        this.markers.set(event.seq, event);
        changed.push(event.seq);
      }
    }
    for (const seq of changed) if (seq) this.arrive(seq);
    for (const topic of ["state", "characters", "members", "campaign", "calls"]) {
      if (touched.has(topic)) this.refresh[topic]();
    }
    this.emit("checks");
  }

  applyFollowup(event) {
    const check = this.checks.get(event.payload.check_seq);
    if (!check || check.redacted) return;
    const rolls = check.data.rolls.slice();
    const first = { ...rolls[0], result: event.payload.result };
    if (event.payload.check) first.check = event.payload.check;
    rolls[0] = first;
    check.data = { ...check.data, rolls };
    if (event.type === EVENT.CHECK_FORTUNE_SPENT) check.data.fortune_spent = true;
    check.outcome = first.result.outcome;
    if (event.dice_marks) check.dice_marks = [...event.dice_marks, ...(check.dice_marks || []).slice(1)];
    if (event.roll_terms) check.roll_terms = [...event.roll_terms, ...(check.roll_terms || []).slice(1)];
    if (event.follow_ups) check.follow_ups = event.follow_ups;
    check.receivedAt = performance.now();
  }

  async reload(seq) {
    if (!seq) return;
    try {
      this.showCheck(await this.api.get(`checks/${seq}/`));
      this.emit("checks"); // what shows it beside the feed follows (the result boxes)
    } catch {
      /* the next catch-up will bring it */
    }
  }

  announce(check) {
    this.say(announcement(check, this.context()));
  }

  // A line for screen readers (the live region beside the feed), whatever it is about.
  say(text) {
    if (!this.announcer) return;
    this.announcer.append(h("p", {}, text));
    while (this.announcer.childElementCount > 5) this.announcer.firstElementChild.remove();
  }

  toast(message, kind = "info") {
    if (!this.toasts) return;
    const item = h("p", { class: `toast toast-${kind}` }, message);
    this.toasts.append(item);
    setTimeout(() => item.remove(), kind === "error" ? 8000 : 3500);
  }

  // --- the feed ---------------------------------------------------------------------------

  buildContext() {
    const characters = new Map(this.characters.map((c) => [c.id, c]));
    return {
      isGm: this.isGm,
      system: this.campaign.system,
      me: this.me.id,
      mayRoll: Boolean(this.state?.may_roll),
      characterName: (id) => characters.get(id)?.name,
      username: (id) => this.usernames.get(id),
      // The follow-ups the server offers for a check: the rule-state panel's list when it was read
      // after the check arrived and its window covers the check (it follows periods, balances and
      // other follow-ups), else the check's own (an older check loaded on demand has its own).
      offers: (check) => {
        const state = this.state || {};
        const fresher = (this.stateAt || 0) >= (check.receivedAt || 0);
        const covered = (state.head_seq || 0) >= check.seq && check.seq >= (state.follow_ups_from ?? Infinity);
        if (fresher && covered) return (state.follow_ups || {})[check.seq] || [];
        return check.follow_ups || [];
      },
      act: (kind, seq, body) => this.act(kind, seq, body),
    };
  }

  async act(kind, seq, body = {}) {
    try {
      // A «Roll again» whose answer was lost is not rolled twice when pressed again (api.post).
      this.showCheck(await this.api.post(`checks/${seq}/${kind}/`, body));
      this.refresh.state();
      this.refresh.characters();
    } catch (error) {
      this.toast(errorText(error, kind === "again" ? "no_connection_roll" : "no_connection_write"), "error");
    }
  }

  // A check this page got from the API (its own roll, a follow-up, a reveal): one card changes.
  showCheck(check) {
    check.receivedAt = performance.now();
    this.checks.set(check.seq, check);
    this.arrive(check.seq);
  }

  // One item arrives in the feed; a new roll rattles (when the user turned the sound on).
  arrive(seq) {
    const what = this.list?.put(seq, { fresh: true });
    if (what === "added" && this.checks.has(seq)) rattle();
  }

  startFeed() {
    if (!this.feedEl) return;
    wireSoundToggle($("#sound-toggle"));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.list?.settle();
    });
    const ctx = () => this.context();
    this.list = new FeedList(this.feedEl, {
      build: (seq) => {
        const check = this.checks.get(seq);
        if (check) return checkItem(check, ctx());
        const marker = this.markers.get(seq);
        return marker ? markerItem(marker, ctx()) : null;
      },
      keyOf: (seq) => cardKey(this.checks.get(seq) || this.markers.get(seq)),
      followups: (seq) => {
        const check = this.checks.get(seq);
        return check && !check.redacted ? followups(check, ctx()) : null;
      },
      loadOlder: (before) => this.loadOlder(before),
    });
    // The same feed as a page that stayed open: with older rolls still on the server, the markers
    // older than the first roll loaded come with those rolls ("Show older", loadOlder); with none,
    // every marker the page was given is shown now.
    const hasOlder = Boolean(this.data.more_checks);
    const first = hasOlder && this.checks.size ? Math.min(...this.checks.keys()) : -Infinity;
    this.list.reset([...this.checks.keys(), ...this.markers.keys()].filter((seq) => !(seq < first)), { hasOlder });
  }

  // What the rules allow changed (state, sheets, options): only the follow-up controls follow.
  refreshControls() {
    this.ctx = null;
    this.list?.refreshControls();
  }

  context() {
    if (this.ctx) return this.ctx;
    return (this.ctx = this.buildContext());
  }

  async loadOlder(before) {
    const page = 50;
    const older = await this.api.get(`checks/?before=${before}&limit=${page}`);
    for (const check of older) if (!this.checks.has(check.seq)) this.checks.set(check.seq, check);
    const seqs = older.map((check) => check.seq);
    const more = older.length === page;
    const from = more ? Math.min(...seqs) : 0;
    for (const seq of this.markers.keys()) if (seq > from && seq < before) seqs.push(seq);
    return { seqs, more };
  }
}

// Changes when what a card shows changes (a follow-up, a reveal), not when it is sent again.
function cardKey(item) {
  if (!item) return "";
  if (!("data" in item) && "type" in item) return `marker:${item.seq}`;
  return JSON.stringify([item.redacted, item.revealed, item.visibility, item.outcome, item.data]);
}

function checkFromEvent(event) {
  const p = event.payload;
  return {
    seq: event.seq,
    kind: p.kind,
    system: p.system,
    visibility: event.visibility,
    revealed: false,
    actor_id: event.actor?.id ?? null,
    created_at: event.created_at,
    redacted: false,
    outcome: p.rolls[0]?.result?.outcome,
    character: event.character,
    session: event.session,
    chapter: event.chapter,
    label: p.label,
    task: p.task,
    manual: p.dice === "manual",
    data: p,
    dice_marks: event.dice_marks || [],
    roll_terms: event.roll_terms || [],
    follow_ups: event.follow_ups || [],
  };
}

function stubFromEvent(event) {
  return {
    seq: event.seq,
    redacted: true,
    visibility: event.visibility,
    actor_id: event.actor?.id ?? null,
    created_at: event.created_at,
  };
}
