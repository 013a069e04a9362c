// Dice drawn as dice: d6 with pips, d10 as a kite with its number. Successes glow, meaningful 1s
// are red, explosions chain with an arrow, rote rerolls are struck through, the AGE Drama Die is
// copper, and Nice!/Damnit! are chips.
import { h } from "./dom.js";
import { t } from "./i18n.js";

const PIPS = {
  1: [[14, 14]],
  2: [[8, 8], [20, 20]],
  3: [[8, 8], [14, 14], [20, 20]],
  4: [[8, 8], [20, 8], [8, 20], [20, 20]],
  5: [[8, 8], [20, 8], [14, 14], [8, 20], [20, 20]],
  6: [[8, 7], [20, 7], [8, 14], [20, 14], [8, 21], [20, 21]],
};

// One die. tone: hit | one | plain | drama | fortune; struck: replaced by another draw.
export function die(sides, face, { tone = "plain", title = "", struck = false, extra = "" } = {}) {
  const classes = ["die", `d${sides}`, `tone-${tone}`];
  if (struck) classes.push("struck");
  if (extra) classes.push(extra);
  let art;
  if (sides === 6) {
    art = h(
      "svg",
      { viewBox: "0 0 28 28", width: 28, height: 28, "aria-hidden": "true", focusable: "false" },
      h("rect", { x: 1.5, y: 1.5, width: 25, height: 25, rx: 6, class: "body" }),
      (PIPS[face] || []).map(([cx, cy]) => h("circle", { cx, cy, r: 2.6, class: "pip" })),
    );
  } else {
    art = h(
      "svg",
      { viewBox: "0 0 28 28", width: 28, height: 28, "aria-hidden": "true", focusable: "false" },
      h("polygon", { points: "14,1.5 26.5,11 22,26.5 6,26.5 1.5,11", class: "body" }),
      h("text", { x: 14, y: 19.5, "text-anchor": "middle", class: "num" }, String(face)),
    );
  }
  return h("span", { class: classes.join(" "), title: title || String(face) }, art);
}

function arrow(kind) {
  return h("span", { class: `chain-arrow ${kind}`, "aria-hidden": "true" }, kind === "boom" ? "↯" : "→");
}

function group(label, ...children) {
  return h("div", { class: "dice", role: "img", "aria-label": label }, ...children);
}

function chip(kind, count) {
  const chips = [];
  for (let i = 0; i < count; i += 1) chips.push(h("span", { class: `chip-token ${kind}`, "aria-hidden": "true" }));
  return h(
    "span",
    { class: `chips ${kind}` },
    h("span", { class: "chip-name" }, kind === "nice" ? "Nice!" : "Damnit!"),
    h("span", { class: "chip-stack" }, chips),
    h("span", { class: "chip-count" }, `×${count}`),
  );
}

// The dice of one roll of a check, as the server marked them (`dice_marks`, docs/websocket.md):
// chains of dice, each die with the marks the rules gave it. Nothing here knows a rule.
const TONES = [
  ["success", "hit"],
  ["one", "one"],
  ["drama", "drama"],
  ["fortune", "fortune"],
];
// Words for a die's tooltip, by mark (the UI strings the server sends).
const MARK_WORDS = { rerolled: "rerolled", exploded: "exploded", chance: "chance_die", drama: "drama_die", fortune: "fortune", double: "doubles" };
const EXTRA = { exploded: "exploded", explodes: "explodes", chance: "chance", drama: "drama-die", fortune: "fortune", double: "double" };

function markedDie(mark) {
  const marks = new Set(mark.marks || []);
  const tone = (TONES.find(([name]) => marks.has(name)) || [null, "plain"])[1];
  const extra = Object.entries(EXTRA)
    .filter(([name]) => marks.has(name))
    .map(([, cls]) => cls)
    .join(" ");
  const words = [...marks].filter((name) => name in MARK_WORDS).map((name) => t(MARK_WORDS[name]));
  const title = words.length ? `${mark.face} — ${words.join(", ")}` : String(mark.face);
  const struck = marks.has("rerolled");
  return die(mark.sides, mark.face, { tone: struck && tone !== "drama" ? "plain" : tone, struck, extra, title });
}

function markedChain(chain) {
  const parts = [];
  chain.forEach((mark, k) => {
    if (k > 0) {
      const marks = new Set(mark.marks || []);
      parts.push(arrow(marks.has("exploded") ? "boom" : marks.has("fortune") ? "fortune" : "reroll"));
    }
    parts.push(markedDie(mark));
  });
  return parts.length === 1 ? parts[0] : h("span", { class: "chain" }, parts);
}

// What a screen reader says of the dice: each chain's faces, with what happened to them.
function spokenDie(mark) {
  const marks = new Set(mark.marks || []);
  const face = marks.has("drama") && !marks.has("rerolled") ? `${t("drama_die")} ${mark.face}` : String(mark.face);
  if (marks.has("rerolled")) return `${mark.face} ${t("rerolled")}`;
  if (marks.has("exploded")) return `↯ ${face}`;
  if (marks.has("fortune")) return `→ ${face}`;
  return face;
}

function spoken(chains) {
  return chains.map((chain) => chain.map(spokenDie).join(" ")).join(", ");
}

export function drawRoll(system, roll, marks) {
  const result = roll.result || {};
  if (system === "storyteller" && result.automatic) return group(t("automatic"), h("span", { class: "auto" }, t("automatic")));
  const chains = marks || [];
  if (!chains.length) return null;
  const dice = chains.map(markedChain);
  if (system === "nice_damnit") {
    const bonus = (roll.check || {}).bonus || 0;
    return group(
      `${t("dice")}: ${spoken(chains)}; ${t("total")} ${result.total}; Nice! ${result.nice}, Damnit! ${result.damnit}`,
      dice,
      h("span", { class: "sum", "aria-hidden": "true" }, `${bonus >= 0 ? "+" : "−"}${Math.abs(bonus)} = ${result.total}`),
      h("span", { class: "chip-row" }, chip("nice", result.nice || 0), chip("damnit", result.damnit || 0)),
    );
  }
  const chance = chains.some((chain) => chain.some((mark) => (mark.marks || []).includes("chance")));
  return group(`${chance ? t("chance_die") + ", " : ""}${t("dice")}: ${spoken(chains)}`, dice);
}
