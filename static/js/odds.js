// The exact odds of a check before it is rolled (POST …/checks/odds/), as a small bar chart.
import { h } from "./dom.js";
import { S, outcomeLabel, outcomeTone, pct, t } from "./i18n.js";
import { breakdown } from "./render.js";

export function oddsChart(system, answer, title) {
  const outcomes = answer.odds.outcomes || {};
  const order = Object.keys(S.outcomes[system] || {}).filter((key) => key in outcomes);
  for (const key of Object.keys(outcomes)) if (!order.includes(key)) order.push(key);
  const shown = shownShares(order.map((key) => outcomes[key]));
  const rows = order.map((key, index) => {
    const p = outcomes[key];
    return h(
      "li",
      { class: `odds-row tone-${outcomeTone(system, key)}` },
      h("span", { class: "odds-label" }, outcomeLabel(system, key)),
      h("span", { class: "odds-bar", "aria-hidden": "true" }, h("span", { class: "odds-fill", style: `width:${Math.max(p * 100, p > 0 ? 1.5 : 0).toFixed(2)}%` })),
      h("span", { class: "odds-pct" }, p < 0.001 || p >= 0.9995 ? pct(p) : pct(shown[index])),
    );
  });
  const dist = answer.odds.successes || answer.odds.totals;
  const distKind = answer.odds.successes ? "distribution_successes" : "distribution_totals";
  return h(
    "figure",
    { class: "odds" },
    h("figcaption", {}, title || t("odds")),
    breakdown(system, { breakdown: answer.breakdown, check: answer.check, rules: answer.rules }, answer.terms),
    h("ul", { class: "odds-rows" }, rows),
    dist ? histogram(dist, t(distKind)) : null,
  );
}

// The shares as shown add up to 100 % (largest remainder, at each share's own precision: 1 % or
// 0.1 % below 10 %), so rounding never shows "101 %".
function shownShares(ps) {
  const unit = (p) => (p < 0.1 ? 0.001 : 0.01);
  const shown = ps.map((p) => Math.round(p / unit(p)) * unit(p));
  for (let step = 0; step < ps.length; step += 1) {
    const gap = 1 - shown.reduce((a, b) => a + b, 0);
    if (Math.abs(gap) < 0.0005) break;
    const direction = Math.sign(gap);
    let best = -1;
    let bestError = -Infinity;
    ps.forEach((p, i) => {
      const error = (p - shown[i]) * direction;
      if (p >= 0.001 && p < 0.9995 && error > bestError) [best, bestError] = [i, error];
    });
    if (best < 0) break;
    shown[best] += direction * unit(ps[best]);
  }
  return shown;
}

function histogram(dist, label) {
  let entries = Object.entries(dist)
    .map(([k, p]) => [Number(k), p])
    .sort((a, b) => a[0] - b[0]);
  // Long explosion tails: fold everything past 99.9% of the mass into the last bar ("n+").
  let cumulative = 0;
  let cut = entries.length;
  for (let i = 0; i < entries.length; i += 1) {
    cumulative += entries[i][1];
    if (cumulative > 0.999 && i < entries.length - 1) {
      cut = i + 1;
      break;
    }
  }
  if (cut < entries.length) {
    const tail = entries.slice(cut - 1).reduce((sum, [, p]) => sum + p, 0);
    entries = entries.slice(0, cut - 1).concat([[entries[cut - 1][0], tail, true]]);
  }
  const max = Math.max(...entries.map((e) => e[1]));
  return h(
    "div",
    { class: "histogram", role: "img", "aria-label": `${label}: ${entries.map(([k, p, more]) => `${more ? t("or_more", { n: k }) : k} ${pct(p)}`).join(", ")}` },
    h("span", { class: "hist-label", "aria-hidden": "true" }, label),
    h(
      "span",
      { class: "hist-bars", "aria-hidden": "true" },
      entries.map(([k, p, more]) =>
        h(
          "span",
          { class: "hist-col", title: `${more ? t("or_more", { n: k }) : k}: ${pct(p)}` },
          h("span", { class: "hist-bar", style: `height:${max ? ((p / max) * 100).toFixed(1) : 0}%` }),
          h("span", { class: "hist-k" }, more ? `${k}+` : String(k)),
        ),
      ),
    ),
  );
}
