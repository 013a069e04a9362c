// Feed items: a check as the table sees it (who, traits, dice, outcome in the system's words,
// follow-ups), a stub for a hidden roll, and a line for session and chapter changes.
import { EVENT } from "./events.js";
import { clear, h } from "./dom.js";
import { drawRoll } from "./dice.js";
import { S, clock, outcomeLabel, outcomeTone, plural, successes, t, traitLabel } from "./i18n.js";

const EYE_SLASH =
  "M2 5.3 3.3 4l16.7 16.7-1.3 1.3-3.1-3.1A10.6 10.6 0 0 1 12 19C6.5 19 2.7 14.6 1.5 12c.6-1.3 1.8-3 3.5-4.4L2 5.3Zm10 2.2c-.6 0-1.1.1-1.6.3l6.3 6.3c.2-.5.3-1 .3-1.6a5 5 0 0 0-5-5Zm0-2.5c5.5 0 9.3 4.4 10.5 7-.5 1.1-1.4 2.4-2.6 3.6L16 12.7A4 4 0 0 0 11.3 8L8.6 5.4C9.7 5.1 10.8 5 12 5ZM7.2 9.8A5 5 0 0 0 14.2 16.8l-1.6-1.6a3 3 0 0 1-3.8-3.8L7.2 9.8Z";

export function icon(path, label) {
  return h(
    "svg",
    { viewBox: "0 0 24 24", width: 16, height: 16, class: "icon", role: label ? "img" : null, "aria-hidden": label ? null : "true" },
    label ? h("title", {}, label) : null,
    h("path", { d: path, fill: "currentColor" }),
  );
}

export function eyeSlash(label) {
  return icon(EYE_SLASH, label);
}

// Circumstances a roll records, and who set them (the server's words, translated).
const CIRCUMSTANCES = { under_pressure: "circ_under_pressure", extended: "circ_extended", stressful: "circ_stressful" };
const SET_BY = { player: "by_player", gm: "by_gm", call: "by_call", default: "by_default" };

function signedNumber(n) {
  return n < 0 ? `−${Math.abs(n)}` : `+${n}`;
}

function signed(n) {
  return n < 0 ? `− ${Math.abs(n)}` : `+ ${n}`;
}

// A breakdown line's name, as rolls.words.line_label says it: a line the server wrote by its
// kind, a resistance's traits and whose they are, a trait, or a modifier's own words.
export function lineLabel(system, line) {
  const kind = typeof line.kind === "string" ? line.kind : "";
  const key = `bd_${kind}`;
  const serverLabel = (S.server_labels || {})[kind];
  if (line.label === kind || line.label === "pool" || line.label === kind.replace(/s$/, "") || (serverLabel && line.label === serverLabel)) {
    if (key in S.t) return t(key);
  }
  if (`bd_${line.label}` in S.t) return t(`bd_${line.label}`);
  if (kind === "resistance" && Array.isArray(line.traits) && line.resister_name) {
    return `${line.traits.map((name) => traitLabel(system, name)).join(" + ")} (${line.resister_name})`;
  }
  return line.label == null ? "" : traitLabel(system, line.label);
}

// A term the server named (docs/websocket.md, `roll_terms`), in words.
const TERM_TEXT = {
  pool_dice: (term) => plural("pool_dice", term.n),
  difficulty: (term) => `${t("difficulty")} ${term.n}`,
  dice_sum: (term) => `${term.dice} ${signed(term.bonus)}`,
  vs_tn: (term) => t("vs_tn", { n: term.n }),
};

function termText(term) {
  const text = TERM_TEXT[term.term];
  if (text) return text(term);
  return term.term in S.t ? t(term.term) : null; // an unknown term is ignored
}

// "Wits 3 + Investigation 3 + Crime scenes 1 − 2 = 5 dice · 8-again · rote"
export function breakdown(system, roll, terms) {
  const lines = roll.breakdown || [];
  const parts = [];
  lines.forEach((line, i) => {
    const value = line.value;
    if (line.cap !== undefined && line.cap !== null) {
      // A group the cap cut: the rule's value and what the cap let through, as the server says.
      const text = t("capped_line", { label: lineLabel(system, line), raw: signedNumber(line.raw), value: signedNumber(value) });
      parts.push(h("span", { class: `bd bd-${line.kind} bd-capped` }, i === 0 ? null : h("span", { class: "op" }, "+"), h("span", { class: "bd-label" }, text)));
      return;
    }
    const op = i === 0 ? (value < 0 ? "−" : "") : value < 0 ? "−" : "+";
    parts.push(
      h(
        "span",
        { class: `bd bd-${line.kind}` },
        op ? h("span", { class: "op" }, op) : null,
        h("span", { class: "bd-label" }, lineLabel(system, line)),
        " ",
        h("span", { class: "bd-value" }, String(Math.abs(value))),
      ),
    );
  });
  // What the roll rolls, in the server's terms (`roll_terms`): no chance-die pool, desperate
  // pool or focus bonus is decided here.
  const tail = (terms || []).map(termText).filter(Boolean);
  const rules = roll.rules || {};
  const retry = rules.retry;
  if (retry) {
    // Storyteller: the retry raises the difficulty (never a term of the dice sum).
    let text = t("retry_raise", { n: retry.attempt, raise: retry.raise });
    if (retry.capped) text += `, ${t("difficulty_capped", { n: retry.difficulty })}`;
    tail.push(text);
  } else if (rules.attempt > 1) tail.push(t("attempt", { n: rules.attempt }));
  const circumstances = roll.circumstances || {};
  for (const [name, said] of Object.entries(circumstances)) {
    if (said.value) tail.push(`${t(CIRCUMSTANCES[name] || name)} (${t(SET_BY[said.by] || said.by)})`);
  }
  return h(
    "div",
    { class: "breakdown" },
    parts.length ? h("span", { class: "bd-sum" }, parts) : null,
    h("span", { class: "bd-total" }, (parts.length ? "= " : "") + tail.join(" · ")),
  );
}

// The outcome in the system's words, with the numbers that matter.
export function outcome(system, roll, marks = []) {
  const result = roll.result || {};
  const tone = outcomeTone(system, result.outcome);
  const facts = [];
  if (["d6pool", "storyteller", "cofd"].includes(system) && result.outcome !== "impossible") {
    if (result.successes > 0) facts.push(successes(result.successes));
    if (system === "storyteller" && result.degree) facts.push((S.degrees || {})[result.degree] || result.degree);
    if (system === "d6pool" && result.severity) facts.push(t("severity", { n: result.severity }));
  }
  if (system === "age" && result.total !== null && result.total !== undefined) {
    facts.push(`${t("total")} ${result.total}`);
    if (result.stunt_points) facts.push(t("stunt_points", { n: result.stunt_points }));
    else if (result.doubles) facts.push(t("doubles"));
  }
  if (system === "nice_damnit") facts.push(`${t("total")} ${result.total}`);
  const notes = [];
  if (result.free_botch_consumed) notes.push(t("free_botch_used"));
  if (result.intentional) notes.push(t("intentional"));
  if (roll.beats_awarded) notes.push(t("beats_awarded", { n: roll.beats_awarded }));
  if (result.willpower || (roll.rules || {}).willpower || roll.willpower_spent) notes.push(t("willpower_spent"));
  const change = (roll.check || {}).fortune_change;
  if (system === "age" && change) {
    // Which die is the Drama Die: the server's marks say (`drama`), not an index kept here.
    const drama = ((marks || [])[change.die] || []).some((die) => (die.marks || []).includes("drama"));
    const die = drama ? t("drama_die") : t("die_n", { n: change.die + 1 });
    notes.push(t("fortune_changed", { die, value: change.value, cost: result.fortune_cost }));
  }
  if (system === "nice_damnit" && result.extra_nice) notes.push(t("nice_taken", { n: result.extra_nice }));
  return h(
    "div",
    { class: "outcome" },
    h("span", { class: `badge tone-${tone}` }, outcomeLabel(system, result.outcome)),
    facts.length ? h("span", { class: "facts" }, facts.join(" · ")) : null,
    notes.map((note) => h("span", { class: "note" }, note)),
  );
}

function comparisonText(check) {
  const c = check.data.comparison;
  if (!c) return null;
  const rolls = check.data.rolls;
  const nameOf = (w) => {
    const index = w === "a" ? 0 : w === "b" ? 1 : typeof w === "number" ? w : null;
    const roll = index === null ? null : rolls[index];
    return roll ? roll.character_name || t("npc") : null;
  };
  const winner = nameOf(c.winner);
  const parts = [];
  if (c.outcome && t(c.outcome) !== c.outcome) {
    parts.push(c.outcome === "effect" ? t("effect", { n: successes(c.successes) }) : t(c.outcome));
  }
  if (winner) parts.push(t("winner", { name: winner }));
  if (c.net_successes) parts.push(t("net_successes", { n: c.net_successes }));
  if (c.margin) parts.push(t("margin", { n: c.margin }));
  if (!winner && c.tie) parts.push(t("tie"));
  if (c.outcome === "reroll") parts.push(t("reroll_tie"));
  return h("div", { class: "comparison" }, parts.join(" · "));
}

// --- the feed item ------------------------------------------------------------------------

export function checkItem(check, ctx) {
  if (check.redacted) return stubItem(check, ctx);
  const system = check.system;
  const rolls = check.data.rolls || [];
  const first = rolls[0] || { result: {} };
  const tone = outcomeTone(system, first.result.outcome);
  const who = ctx.username(check.actor_id);
  const hidden = check.visibility !== "public";
  const tags = [];
  if (hidden) {
    const label = check.revealed ? t("revealed_mark") : t(check.visibility === "blind" ? "blind_mark" : "private_mark");
    tags.push(h("span", { class: `tag vis vis-${check.visibility}${check.revealed ? " revealed" : ""}`, title: label }, eyeSlash(), h("span", {}, label)));
  }
  if (check.manual) tags.push(h("span", { class: "tag" }, t("manual_mark")));
  if (check.task) tags.push(h("span", { class: "tag task" }, `${t("task")}: ${check.task}`));
  const marks = check.dice_marks || [];
  const body = rolls.map((roll, index) =>
    h(
      "div",
      { class: "roll-line" },
      rolls.length > 1 ? h("div", { class: "roll-sub" }, roll.character_name || t("npc"), roll.label ? ` — ${roll.label}` : "") : null,
      breakdown(system, roll, (check.roll_terms || [])[index]),
      h("div", { class: "roll-result" }, drawRoll(system, roll, marks[index]), outcome(system, roll, marks[index])),
    ),
  );
  const character = first.character_name || t("npc");
  const item = h(
    "article",
    {
      class: `roll tone-${tone}${hidden && !check.revealed ? " is-hidden" : ""}`,
      "data-seq": check.seq,
      id: `roll-${check.seq}`,
      "aria-label": `${character}: ${outcomeLabel(system, first.result.outcome)}`,
    },
    h(
      "header",
      { class: "roll-head" },
      h("span", { class: "roll-who" }, h("strong", { class: "character" }, character), who ? h("span", { class: "player" }, who) : null),
      h("span", { class: "roll-meta" }, h("time", { datetime: check.created_at }, clock(check.created_at)), h("span", { class: "seq" }, `#${check.seq}`)),
    ),
    check.label ? h("p", { class: "roll-label" }, check.label) : null,
    tags.length ? h("div", { class: "tags" }, tags) : null,
    body,
    comparisonText(check),
    followups(check, ctx),
  );
  return item;
}

// "Roll again" on one's own cards that carry the request they were rolled from, while the
// server's state says this member may roll (`may_roll`: a session is open). The server rolls it
// anew: POST …/checks/<seq>/again/. Drawn with the follow-ups, so it follows the state live.
function rollAgain(check, ctx) {
  if (!ctx.mayRoll || !ctx.me || check.actor_id !== ctx.me || !check.data.request) return null;
  return h("button", { type: "button", class: "btn btn-small btn-ghost roll-again", onclick: () => ctx.act("again", check.seq) }, t("roll_again"));
}

// What one just rolled, beside the button one pressed (the roll form's result, a call's answer):
// who, the dice, the outcome and a link to its card in the feed.
export function lastRoll(check) {
  const link = h("a", { href: `#roll-${check.seq}`, class: "last-link" }, t("in_feed", { n: check.seq }));
  // A blind roll: its roller may not see it, but is told where it went.
  if (check.redacted) return h("p", { class: "last-roll last-blind" }, t("blind_sent"), " ", link);
  const roll = (check.data.rolls || [])[0];
  if (!roll) return null;
  const marks = (check.dice_marks || [])[0];
  return h("div", { class: "last-roll" }, h("span", { class: "last-who" }, roll.character_name || t("npc")), drawRoll(check.system, roll, marks), outcome(check.system, roll, marks), link);
}

// When the table's copy of a check changes (a follow-up taken, a reveal), `lastRoll` would draw
// it anew: a box redraws its rolls only when their keys change.
export function lastRollKey(check) {
  return `${check.seq}@${check.receivedAt}`;
}

// A die face down: what a hidden roll looks like to those who may not see it.
export function hiddenDie() {
  return h(
    "svg",
    { viewBox: "0 0 28 28", width: 18, height: 18, class: "stub-icon", "aria-hidden": "true", focusable: "false" },
    h("rect", { x: 2, y: 2, width: 24, height: 24, rx: 6, fill: "none", stroke: "currentColor", "stroke-width": 2 }),
    h("text", { x: 14, y: 19.5, "text-anchor": "middle", fill: "currentColor", "font-size": 15, "font-weight": 700 }, "?"),
  );
}

function stubItem(check, ctx) {
  const who = ctx.username(check.actor_id) || "?";
  return h(
    "article",
    { class: "roll stub", "data-seq": check.seq, "data-redacted": "1" },
    h(
      "header",
      { class: "roll-head" },
      h("span", { class: "roll-who" }, h("span", { class: "stub-text" }, hiddenDie(), t("hidden_by", { name: who }))),
      h("span", { class: "roll-meta" }, h("time", { datetime: check.created_at }, clock(check.created_at)), h("span", { class: "seq" }, `#${check.seq}`)),
    ),
  );
}

export function markerItem(event, ctx = null) {
  const p = event.payload || {};
  let text = "";
  const kind = event.type.split(".")[0];
  if (event.type.endsWith(".started")) text = t(`${kind}_started`, { n: p.number });
  else if (event.type.endsWith(".ended")) text = t(`${kind}_ended`, { n: p.number });
  else if (event.type === EVENT.CHECK_CALLED) text = t("called", { names: (p.character_names || []).join(", ") });
  else if (event.type === EVENT.MEMBER_JOINED) text = t("joined", { name: p.username || "?" });
  else if (event.type === EVENT.CHARACTER_CHANGED && p.during_session && (p.diff || []).length && ctx?.isGm) {
    // A sheet changed while a session was open: the GM sees what changed, in the feed.
    const system = ctx.system;
    const shown = (v) => (v === null || v === undefined ? "—" : Array.isArray(v) ? v.map((x) => traitLabel(system, x)).join(", ") || "—" : String(v));
    const changes = p.diff.map((d) => `${traitLabel(system, d.trait)} ${shown(d.from)} → ${shown(d.to)}`).join(", ");
    text = t("sheet_changed", { name: p.name || ctx.characterName(p.character_id) || "?", changes });
  }
  if (!text) return null;
  const title = p.title ? ` — ${p.title}` : "";
  return h(
    "div",
    { class: `marker marker-${kind}`, "data-seq": event.seq, role: "separator" },
    h("span", {}, text + title),
  );
}

// --- follow-ups ---------------------------------------------------------------------------
// The server lists what this viewer may apply to a check now, with costs and choices
// (`follow_ups`, docs/websocket.md); the page draws one button or form per offer and decides none.

export function followups(check, ctx) {
  const drawn = ctx
    .offers(check)
    .map((offer) => (OFFER_VIEWS[offer.kind] || (() => null))(check, offer, ctx))
    .flat()
    .concat(rollAgain(check, ctx))
    .filter(Boolean);
  return drawn.length ? h("div", { class: "followups" }, drawn) : null;
}

// What taking the choice gives, as the server's offer says it (`gain`: the Nice! and the Damnit!
// that come with them).
function extraNiceLabel(choice) {
  const gain = choice.gain || {};
  const n = gain.nice ?? choice.body.count;
  return gain.damnit ? t("extra_nice_with_damnit", { n, d: gain.damnit }) : t("extra_nice", { n });
}

function offerButton(check, offer, choice, ctx, cls, label, title = null) {
  return h("button", { type: "button", class: `btn ${cls}`, title, onclick: () => ctx.act(offer.action, check.seq, choice.body) }, label);
}

const OFFER_VIEWS = {
  dramatic_failure: (check, offer, ctx) =>
    offer.choices.map((choice) => offerButton(check, offer, choice, ctx, "btn-drama", t("dramatic_failure"), t(`dramatic_failure_hint_${offer.limit}`))),
  extra_nice: (check, offer, ctx) => offer.choices.map((choice) => offerButton(check, offer, choice, ctx, "btn-nice", extraNiceLabel(choice))),
  reveal: (check, offer, ctx) => offer.choices.map((choice) => offerButton(check, offer, choice, ctx, "btn-ghost", t("reveal"))),
  fortune: fortuneForm,
};

function fortuneForm(check, offer, ctx) {
  const roll = (check.data.rolls || [])[0] || {};
  const id = `fortune-${check.seq}`;
  const dieName = (choice) => (choice.drama_die ? t("drama_die") : t("die_n", { n: choice.body.die + 1 }));
  const dice = [];
  for (const choice of offer.choices) if (!dice.some((c) => c.body.die === choice.body.die)) dice.push(choice);
  const dieSelect = h("select", { id: `${id}-die`, name: "die" }, dice.map((c) => h("option", { value: c.body.die }, dieName(c))));
  const valueSelect = h("select", { id: `${id}-value`, name: "value" });
  const cost = h("span", { class: "cost" });
  const submit = h("button", { type: "submit", class: "btn btn-fortune" }, t("fortune"));
  const chosen = () => offer.choices.find((c) => String(c.body.die) === dieSelect.value && String(c.body.value) === valueSelect.value);
  const showCost = () => {
    const choice = chosen();
    const balance = t("fortune_balance", { name: roll.character_name, n: (offer.balance || {}).fortune });
    cost.textContent = choice ? `${t("fortune_cost", { n: choice.cost.fortune })} · ${balance}` : balance;
  };
  const fillValues = () => {
    const values = offer.choices.filter((c) => String(c.body.die) === dieSelect.value);
    clear(valueSelect).append(...values.map((c, i) => h("option", { value: c.body.value, selected: i === values.length - 1 }, String(c.body.value))));
    showCost();
  };
  dieSelect.addEventListener("change", fillValues);
  valueSelect.addEventListener("change", showCost);
  fillValues();
  return h(
    "details",
    { class: "fortune" },
    h("summary", { class: "btn btn-fortune" }, t("fortune")),
    h(
      "form",
      {
        class: "fortune-form",
        onsubmit: (e) => {
          e.preventDefault();
          const choice = chosen();
          if (choice) ctx.act(offer.action, check.seq, choice.body);
        },
      },
      h("label", { for: dieSelect.id }, t("fortune_die")),
      dieSelect,
      h("label", { for: valueSelect.id }, t("fortune_value")),
      valueSelect,
      submit,
      cost,
    ),
  );
}

// A short sentence for screen readers when a roll arrives.
export function announcement(check, ctx) {
  if (check.redacted) return t("hidden_by", { name: ctx.username(check.actor_id) || "?" });
  const roll = (check.data.rolls || [])[0] || { result: {} };
  const bits = [outcomeLabel(check.system, roll.result.outcome)];
  if (roll.result.successes > 0) bits.push(successes(roll.result.successes));
  if (roll.result.total !== undefined && roll.result.total !== null) bits.push(`${t("total")} ${roll.result.total}`);
  return t("announce_roll", { who: roll.character_name || ctx.username(check.actor_id) || "", outcome: bits.join(", ") });
}
