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

// One die. tone: hit | one | plain | drama | fortune; flags: struck, exploded, chance.
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

// The dice of one roll of a check, drawn per system.
export function drawRoll(system, roll) {
  const result = roll.result || {};
  const check = roll.check || {};
  switch (system) {
    case "d6pool":
      return drawPool(result.dice || roll.faces || [], 6, (f) => (f >= 4 ? "hit" : f === 1 ? "one" : "plain"));
    case "storyteller":
      if (result.automatic) return group(t("automatic"), h("span", { class: "auto" }, t("automatic")));
      if (!(result.dice || []).length) return null;
      return drawPool(result.dice, 10, (f) => (f >= result.target ? "hit" : f === 1 ? "one" : "plain"));
    case "cofd":
      return drawCofd(result, check);
    case "age":
      return drawAge(result);
    case "nice_damnit":
      return drawNice(result, check);
    default:
      return drawPool(roll.faces || [], 10, () => "plain");
  }
}

function drawPool(faces, sides, toneOf) {
  return group(
    `${t("dice")}: ${faces.join(", ")}`,
    faces.map((f) => die(sides, f, { tone: toneOf(f) })),
  );
}

function drawCofd(result, check) {
  const chains = result.dice || [];
  const rerolled = new Set(result.rerolled || []);
  const again = check.again === undefined ? 10 : check.again;
  const chance = Boolean(result.chance_die);
  const toneOf = (face) => {
    if (chance) return face === 10 ? "hit" : face === 1 ? "one" : "plain";
    return face >= 8 ? "hit" : "plain";
  };
  const spoken = [];
  const pieces = chains.map((chain, index) => {
    const parts = [];
    const words = [];
    let rest = chain;
    if (rerolled.has(index) && chain.length > 1) {
      parts.push(die(10, chain[0], { tone: "plain", struck: true, title: `${chain[0]} — ${t("rerolled")}` }));
      parts.push(arrow("reroll"));
      words.push(`${chain[0]} ${t("rerolled")}`);
      rest = chain.slice(1);
    }
    rest.forEach((face, k) => {
      if (k > 0) parts.push(arrow("boom"));
      const exploding = again !== null && !chance && face >= again && k < rest.length - 1;
      parts.push(
        die(10, face, {
          tone: toneOf(face),
          extra: [k > 0 ? "exploded" : "", exploding ? "explodes" : "", chance ? "chance" : ""].join(" ").trim(),
          title: k > 0 ? `${face} — ${t("exploded")}` : chance ? `${face} — ${t("chance_die")}` : String(face),
        }),
      );
      words.push(k > 0 ? `↯ ${face}` : String(face));
    });
    spoken.push(words.join(" "));
    return h("span", { class: "chain" }, parts);
  });
  return group(`${chance ? t("chance_die") + ", " : ""}${t("dice")}: ${spoken.join(", ")}`, pieces);
}

function drawAge(result) {
  const rolled = result.rolled || [];
  const faces = result.faces || [];
  if (!rolled.length) return null;
  const counts = {};
  faces.forEach((f) => (counts[f] = (counts[f] || 0) + 1));
  const pieces = rolled.map((face, index) => {
    const drama = index === 2;
    const final = faces[index];
    const tone = drama ? "drama" : "plain";
    const title = drama ? `${t("drama_die")}: ${final}` : String(final);
    const doubled = result.doubles && counts[final] > 1 ? "double" : "";
    if (final !== face) {
      return h(
        "span",
        { class: "chain" },
        die(6, face, { tone, struck: true, extra: drama ? "drama-die" : "" }),
        arrow("fortune"),
        die(6, final, { tone: drama ? "drama" : "fortune", title, extra: [drama ? "drama-die" : "", "fortune", doubled].join(" ").trim() }),
      );
    }
    return die(6, face, { tone, title, extra: [drama ? "drama-die" : "", doubled].join(" ").trim() });
  });
  const label = `${t("dice")}: ${faces.slice(0, 2).join(", ")}; ${t("drama_die")}: ${faces[2]}`;
  return group(label, pieces);
}

function drawNice(result, check) {
  const faces = result.dice || [];
  const bonus = check.bonus || 0;
  return group(
    `${t("dice")}: ${faces.join(", ")}; ${t("total")} ${result.total}; Nice! ${result.nice}, Damnit! ${result.damnit}`,
    faces.map((f) => die(10, f, { tone: f === 10 ? "hit" : f === 1 ? "one" : "plain" })),
    h("span", { class: "sum", "aria-hidden": "true" }, `${bonus >= 0 ? "+" : "−"}${Math.abs(bonus)} = ${result.total}`),
    h("span", { class: "chip-row" }, chip("nice", result.nice || 0), chip("damnit", result.damnit || 0)),
  );
}
