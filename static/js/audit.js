// The audit table: the same dice drawings as the feed, and filters that apply as they change.
import { $, $$, clear, jsonScript } from "./dom.js";
import { drawRoll } from "./dice.js";
import { dateTime } from "./i18n.js";
import { outcome } from "./render.js";

// Times in the reader's zone, marked, as the feed shows them (the server wrote UTC).
for (const time of $$("time[datetime]")) {
  const text = dateTime(time.getAttribute("datetime"));
  if (text) time.textContent = text;
}

const data = jsonScript("audit-data") || {};
for (const cell of $$(".dice-cell[data-key]")) {
  const check = data[cell.dataset.key];
  if (!check || !check.data) continue;
  const marks = check.dice_marks || [];
  const drawings = (check.data.rolls || []).map((roll, i) => drawRoll(check.system, roll, marks[i])).filter(Boolean);
  if (drawings.length) clear(cell).append(...drawings);
  // The outcome with its numbers (successes, total, stunt points…), as in the feed.
  const result = cell.parentElement.querySelector(".outcome-cell");
  const first = (check.data.rolls || [])[0];
  if (result && first) clear(result).append(outcome(check.system, first, marks[0]));
}

const form = $("#audit-filters");
if (form) {
  form.addEventListener("change", (event) => {
    // A new campaign has other sessions, chapters and characters: start those filters afresh.
    if (event.target.name === "campaign") {
      for (const name of ["session", "chapter", "character"]) if (form.elements[name]) form.elements[name].value = "";
    }
    form.requestSubmit();
  });
}
