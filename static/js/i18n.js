// The pages' words, rendered by the server in the active language (campaign/templatetags).
import { jsonScript } from "./dom.js";

export const S = jsonScript("ui-strings") || { t: {}, outcomes: {}, tones: {} };
export const LANG = document.documentElement.lang || "ru";

export function t(key, vars = {}) {
  const template = S.t[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? vars[name] : `{${name}}`));
}

// A trait as the page's language names it: sheets and rolls keep a listed trait under its key
// (its English name); a custom one is shown as written.
export function traitLabel(system, name) {
  const labels = S.traits?.[system] || {};
  return Object.hasOwn(labels, name) ? labels[name] : name; // "constructor" is a name, too
}

export function outcomeLabel(system, outcome) {
  return (S.outcomes[system] || {})[outcome] || outcome;
}

export function outcomeTone(system, outcome) {
  return (S.tones[system] || {})[outcome] || "mixed";
}

const PLURALS = new Intl.PluralRules(LANG);

// "{n} successes" in the language's plural form (Russian has one, few and many).
export function plural(base, n) {
  const key = `${base}_${PLURALS.select(n)}`;
  return t(key in S.t ? key : `${base}_many`, { n });
}

export function successes(n) {
  return plural("success", n);
}

export function pct(p) {
  if (p <= 0) return "0%";
  if (p >= 0.9995) return p >= 1 ? "100%" : ">99.9%";
  if (p < 0.001) return "<0.1%";
  const digits = p < 0.1 ? 1 : 0;
  return `${(p * 100).toLocaleString(LANG, { maximumFractionDigits: digits, minimumFractionDigits: digits })}%`;
}

// The feed and the audit page say the time the same way: in the reader's time zone, marked.
export function clock(iso) {
  return when(iso, { hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
}

export function dateTime(iso) {
  return when(iso, { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
}

function when(iso, format) {
  try {
    return new Date(iso).toLocaleString(LANG, format);
  } catch {
    return "";
  }
}
