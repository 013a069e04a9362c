// The one-line roll box: "Wits + Occult 8again rote", "6d10 t8", "diff 7". The server parses it
// (POST …/checks/parse/, docs/rollbox.md): this shows the check it understood with its exact
// odds, or the word it did not, with suggestions; Enter rolls what the preview showed. Trait
// names from the sheet complete as one types (↓/↑ to choose, Tab or Enter to take).
import { answerLost, errorText } from "./api.js";
import { $, clear, debounce, h } from "./dom.js";
import { t, traitLabel } from "./i18n.js";
import { oddsChart } from "./odds.js";

// A few of the grammar's words per system, offered beside the trait names.
const WORDS = {
  cofd: ["rote", "8again", "9again", "noagain", "vs", "wp"],
  storyteller: ["diff", "auto", "vs", "wp"],
  age: ["tn", "vs"],
  d6pool: ["easy", "hard", "vs"],
  nice_damnit: [],
};
const COMMON = ["private", "blind"];

export class RollBox {
  constructor(composer, input) {
    this.composer = composer;
    this.table = composer.table;
    this.input = input;
    this.list = $("#rollbox-list");
    this.preview = $("#rollbox-preview");
    this.error = $("#rollbox-error");
    this.parsed = null;
    this.choice = -1;
    this.check = debounce(() => this.parse(), 250);
    input.addEventListener("input", () => {
      this.parsed = null;
      this.composer.boxInUse(this.active());
      this.complete();
      this.check();
    });
    input.addEventListener("keydown", (event) => this.key(event));
    input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
    this.favourites = $("#rollbox-favourites");
    $("#rollbox-save")?.addEventListener("click", () => this.saveFavourite());
  }

  // --- favourite rolls (per character, where the server keeps them) -------------------------

  renderFavourites() {
    if (!this.favourites) return;
    const character = this.character();
    const list = character && Array.isArray(character.favourites) ? character.favourites : null;
    this.favourites.hidden = !list;
    $("#rollbox-save").hidden = !list;
    if (!list) return;
    this.favourites.replaceChildren(
      ...list.map((favourite) =>
        h(
          "li",
          { class: "favourite" },
          h("button", { type: "button", class: "btn btn-small btn-ghost", title: favourite.text, onclick: () => this.use(favourite.text) }, favourite.name || favourite.text),
          h("button", { type: "button", class: "chip-x", "aria-label": `${t("remove")}: ${favourite.name || favourite.text}`, onclick: () => this.dropFavourite(character, favourite) }, "×"),
        ),
      ),
    );
  }

  use(text) {
    this.input.value = text;
    this.input.focus();
    this.parse();
  }

  async saveFavourite() {
    const character = this.character();
    const text = this.input.value.trim();
    if (!character || !text) return;
    try {
      await this.table.api.post(`characters/${character.id}/favourites/`, { text });
      this.table.refresh.characters();
    } catch (error) {
      this.show(null, error);
    }
  }

  async dropFavourite(character, favourite) {
    try {
      await this.table.api.del(`characters/${character.id}/favourites/${favourite.id}/`);
      this.table.refresh.characters();
    } catch (error) {
      this.table.toast(errorText(error), "error");
    }
  }

  character() {
    const chosen = this.composer.chosen();
    return chosen.length === 1 ? chosen[0] : null;
  }

  // The box holds a line: it is the check the form's buttons roll or call.
  active() {
    return Boolean(this.input.value.trim());
  }

  // Who the line is for changed (characters ticked or unticked): read it again for them.
  refresh() {
    if (!this.active()) return;
    this.parsed = null;
    this.check();
  }

  async parse() {
    const text = this.input.value.trim();
    const token = (this.token = (this.token || 0) + 1);
    this.composer.boxInUse(Boolean(text));
    if (!text) {
      this.show(null, null);
      return;
    }
    // Several characters (a GM's group check): the server reads the line for each of them.
    const chosen = this.composer.chosen();
    const body = chosen.length > 1 ? { text, characters: chosen.map((c) => c.id) } : { text, character: chosen[0]?.id ?? null };
    try {
      const answer = await this.table.api.post("checks/parse/", body);
      if (token !== this.token) return;
      this.parsed = answer.request;
      this.failure = null;
      this.show(answer, null);
    } catch (error) {
      if (token !== this.token) return;
      this.parsed = null;
      this.failure = error; // a refused line, or no answer at all (the form says which)
      this.show(null, error);
    }
  }

  // The check the line names, as the server read it (read first if it is not in yet); null
  // when the server refused the line (its error shows under the box).
  async request() {
    if (!this.parsed) await this.parse();
    return this.parsed;
  }

  show(answer, error) {
    clear(this.preview);
    const system = this.table.campaign.system;
    if (answer && answer.previews) {
      for (const one of answer.previews) this.preview.append(oddsChart(system, one, t("odds_for", { name: one.name })));
    } else if (answer && answer.odds) {
      const name = this.character()?.name;
      this.preview.append(oddsChart(system, answer, name ? t("odds_for", { name }) : t("odds")));
    }
    clear(this.error);
    this.error.hidden = !error;
    // Only the server's refusal marks the line wrong: without an answer it may be right.
    this.input.setAttribute("aria-invalid", error && !answerLost(error) ? "true" : "false");
    if (!error) return;
    const body = error.body || {};
    const at = body.at;
    const text = this.input.value;
    const message = (body.text || []).join(" ") || errorText(error);
    this.error.append(message);
    if (at && typeof at.start === "number") {
      // The line again, the word it did not understand marked.
      this.error.append(
        h("span", { class: "rollbox-echo", "aria-hidden": "true" }, text.slice(0, at.start), h("mark", {}, text.slice(at.start, at.end)), text.slice(at.end)),
      );
    }
    for (const suggestion of body.suggestions || []) {
      this.error.append(
        " ",
        h(
          "button",
          {
            type: "button",
            class: "btn btn-small btn-ghost",
            onclick: () => {
              const value = this.input.value;
              this.input.value = at ? value.slice(0, at.start) + suggestion + value.slice(at.end) : `${value} ${suggestion}`;
              this.input.focus();
              this.parse();
            },
          },
          suggestion,
        ),
      );
    }
  }

  // --- completion --------------------------------------------------------------------------

  words() {
    const names = new Set();
    const chosen = this.composer.chosen();
    for (const character of chosen.length ? chosen : this.composer.candidates()) {
      for (const group of Object.values(character.traits || {})) {
        if (group && typeof group === "object" && !Array.isArray(group)) {
          // The reader's name of a listed trait too: the line takes either.
          for (const name of Object.keys(group)) names.add(name).add(traitLabel(this.table.campaign.system, name));
        }
      }
    }
    return [...names, ...(WORDS[this.table.campaign.system] || []), ...COMMON];
  }

  currentWord() {
    const upto = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const match = upto.match(/([^\s+\-#@()]*)$/);
    return { word: match ? match[1] : "", start: upto.length - (match ? match[1].length : 0) };
  }

  complete() {
    const { word } = this.currentWord();
    const lower = word.toLowerCase();
    const options = lower ? this.words().filter((w) => w.toLowerCase().startsWith(lower) && w.toLowerCase() !== lower).slice(0, 8) : [];
    clear(this.list);
    this.choice = -1;
    options.forEach((option, index) => {
      this.list.append(
        h(
          "li",
          {
            id: `rollbox-option-${index}`,
            role: "option",
            "aria-selected": "false",
            onmousedown: (event) => {
              event.preventDefault();
              this.take(option);
            },
          },
          option,
        ),
      );
    });
    const open = options.length > 0;
    this.list.hidden = !open;
    this.input.setAttribute("aria-expanded", String(open));
    this.input.removeAttribute("aria-activedescendant");
  }

  move(step) {
    const items = [...this.list.children];
    if (!items.length) return;
    this.choice = (this.choice + step + items.length) % items.length;
    items.forEach((item, index) => item.setAttribute("aria-selected", String(index === this.choice)));
    this.input.setAttribute("aria-activedescendant", items[this.choice].id);
  }

  take(option) {
    const { start } = this.currentWord();
    const end = this.input.selectionStart ?? this.input.value.length;
    const value = this.input.value;
    const rest = value.slice(end);
    this.input.value = `${value.slice(0, start)}${option}${rest.startsWith(" ") ? "" : " "}${rest}`;
    const caret = start + option.length + 1;
    this.input.setSelectionRange(caret, caret);
    this.close();
    this.parse();
  }

  close() {
    clear(this.list);
    this.list.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  key(event) {
    const open = !this.list.hidden && this.list.childElementCount > 0;
    if (open && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      this.move(event.key === "ArrowDown" ? 1 : -1);
    } else if (open && (event.key === "Tab" || event.key === "Enter") && this.choice >= 0) {
      event.preventDefault();
      this.take(this.list.children[this.choice].textContent);
    } else if (open && event.key === "Escape") {
      event.preventDefault();
      this.close();
    } else if (event.key === "Enter") {
      event.preventDefault();
      this.roll();
    }
  }

  // Enter: roll what the preview shows (parsing first if the preview is not in yet).
  async roll() {
    if (!this.active()) return;
    await this.composer.submit("roll");
  }
}
