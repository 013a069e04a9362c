// The roll form (players) and the call for a check (GM): traits from the sheet, the system's own
// fields, the odds before anything is rolled, then roll (or call).
import { answerLost, errorFields, errorText, isNetworkError } from "./api.js";
import { $, $$, clear, debounce, h, rebuildIfChanged } from "./dom.js";
import { clientSeed } from "./entropy.js";
import { S, t, traitLabel } from "./i18n.js";
import { oddsChart } from "./odds.js";
import { lastRoll, lastRollKey } from "./render.js";
import { RollBox } from "./rollbox.js";

export const ROLLABLE = {
  d6pool: ["attributes", "abilities"],
  storyteller: ["attributes", "abilities"],
  cofd: ["attributes", "skills"],
  age: ["abilities"],
  nice_damnit: ["areas", "skills"],
};
const MAX_TRAITS = { age: 1 };
// Declared for one roll only: never remembered, cleared once the roll is made.
const TRANSIENT = new Set(["character", "faces", "willpower", "resistance_willpower"]);

export class Composer {
  constructor(table, form) {
    this.table = table;
    this.form = form;
    this.system = table.campaign.system;
    this.gm = form.dataset.mode === "gm";
    this.traits = [];
    this.selected = new Set();
    this.oddsEl = $("#composer-odds", form);
    this.errorEl = $("#composer-error", form);
    this.picker = $("#trait-picker", form);
    this.placeholder = this.picker.options[0]?.textContent || "+";
    this.updateOdds = debounce(() => this.odds(), 200);
    table.on("checks", () => this.renderResult());
    this.storeKey = `tablecheck:roll-form:${table.campaign.id}:${table.me.id}:${form.dataset.mode}`;
    // Words and faces do not change the odds; everything else does.
    const quiet = new Set(["label", "modifier_label", "faces", "visibility"]);
    form.addEventListener("input", (event) => {
      if (event.target === this.picker) return;
      if (!quiet.has(event.target.name)) this.updateOdds();
      this.save();
    });
    form.addEventListener("change", (event) => {
      if (event.target === this.picker) {
        // Arrow keys walk the list without adding; Enter (or a click in the list) adds.
        if (!this.walking && this.picker.value) this.addPicked();
        return;
      }
      if (!quiet.has(event.target.name)) this.updateOdds();
      this.save();
    });
    this.picker.addEventListener("keydown", (event) => {
      const opens = event.key === " " || (event.altKey && event.key.startsWith("Arrow"));
      this.walking = !opens && event.key !== "Enter";
      if (event.key === "Enter") {
        event.preventDefault();
        if (this.picker.value) this.addPicked();
      }
    });
    this.picker.addEventListener("pointerdown", () => (this.walking = false));
    $("#trait-add", form)?.addEventListener("click", () => this.picker.value && this.addPicked());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const action = event.submitter?.value || "roll";
      this.submit(action);
    });
    // "/" from anywhere outside a field: straight to the form (the one-line box when there is one).
    document.addEventListener("keydown", (event) => {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.target.closest?.("input, textarea, select, [contenteditable]")) return;
      const box = $("#rollbox", form);
      const target = box && !box.closest("[hidden]") ? box : this.picker;
      event.preventDefault();
      target.focus();
    });
    // What the server holds changed (a sheet, a Willpower spent or edited, a task reset, a new
    // period): the balance beside the box is shown again, and the odds asked again (they are
    // the server's; it knows what they depend on). An answer like the last one redraws nothing.
    const follow = () => {
      this.showWillpower();
      this.updateOdds();
    };
    table.on("characters", () => {
      this.renderCharacters();
      follow();
      this.rollbox?.renderFavourites();
    });
    table.on("state", follow);
    this.renderCharacters();
    this.restore();
    const box = $("#rollbox", form);
    this.rollbox = box ? new RollBox(this, box) : null;
    this.rollbox?.renderFavourites();
    $("#composer-fields-show", form)?.addEventListener("click", () => {
      box.value = "";
      this.rollbox.parse();
      $("#trait-picker", form).focus();
    });
  }

  // The roll box holds a line: it is the check, and the fields that would describe another
  // step aside (who sees it, what for, the task and the faces still apply to it).
  boxInUse(on) {
    const fields = $("#composer-fields", this.form);
    if (!fields || fields.hidden === on) return;
    fields.hidden = on;
    this.oddsEl.hidden = on;
    $("#composer-fields-note", this.form).hidden = !on;
  }

  // The check the form's buttons roll or call: the roll box's line when it holds one (as the
  // server read it; null when it refused it), else the fields.
  async checkRequest() {
    if (!this.rollbox?.active()) return this.request();
    const parsed = await this.rollbox.request();
    if (!parsed) return null;
    const request = { ...parsed };
    delete request.character; // the form's characters roll it (or a call names them)
    const f = new FormData(this.form);
    for (const name of ["visibility", "label", "task"]) {
      const value = (f.get(name) || "").toString().trim();
      if (value && !(name in request)) request[name] = value;
    }
    return request;
  }

  addPicked() {
    this.addTrait(this.picker.value);
    this.picker.value = "";
    this.walking = false;
  }

  // --- what the user chose survives a reload ------------------------------------------------

  save() {
    if (this.restoring) return;
    const fields = {};
    for (const el of this.form.elements) {
      if (!el.name || TRANSIENT.has(el.name) || el === this.picker) continue;
      if (el.type === "radio") {
        if (el.checked) fields[el.name] = el.value;
      } else if (el.type === "checkbox") fields[el.name] = el.checked;
      else if (["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) fields[el.name] = el.value;
    }
    const state = { traits: this.traits, selected: [...this.selected], fields };
    try {
      localStorage.setItem(this.storeKey, JSON.stringify(state));
    } catch {
      /* private mode or full: the form still works, it just forgets */
    }
  }

  restore() {
    let state;
    try {
      state = JSON.parse(localStorage.getItem(this.storeKey) || "null");
    } catch {
      state = null;
    }
    if (!state) return;
    this.restoring = true;
    const ids = new Set(this.candidates().map((c) => c.id));
    const selected = (state.selected || []).filter((id) => ids.has(id));
    if (selected.length) {
      this.selected = new Set(this.gm ? selected : selected.slice(0, 1));
      $$("input[name=character]", this.form).forEach((input) => (input.checked = this.selected.has(input.value)));
      this.refreshFields();
    }
    const known = new Set($$("option", this.picker).map((o) => o.value));
    this.traits = (state.traits || []).filter((name) => known.has(name));
    for (const [name, value] of Object.entries(state.fields || {})) {
      for (const el of this.form.querySelectorAll(`[name="${CSS.escape(name)}"]`)) {
        if (el.type === "radio") el.checked = el.value === value;
        else if (el.type === "checkbox") el.checked = Boolean(value);
        else if (el.tagName !== "SELECT" || $$("option", el).some((o) => o.value === value)) el.value = value;
      }
    }
    this.renderTraits();
    this.refreshSpecialties();
    const specialty = (state.fields || {})[this.system === "cofd" ? "specialty" : "focus"];
    const select = this.form.elements[this.system === "cofd" ? "specialty" : "focus"];
    if (specialty && select && $$("option", select).some((o) => o.value === specialty)) select.value = specialty;
    this.restoring = false;
    this.updateOdds();
  }

  // Characters this form can roll for, as the server says (`acts_for`: mine, or all for a GM).
  candidates() {
    return this.table.characters.filter((c) => c.acts_for);
  }

  chosen() {
    return this.candidates().filter((c) => this.selected.has(c.id));
  }

  renderCharacters() {
    const box = $("#composer-characters", this.form);
    const candidates = this.candidates();
    const key = candidates.map((c) => [c.id, c.name, c.owner_id, c.traits, this.table.usernames.get(c.owner_id)]);
    return rebuildIfChanged(box, key, () => this.characterBox(box, candidates));
  }

  characterBox(box, candidates) {
    const ids = new Set(candidates.map((c) => c.id));
    for (const id of [...this.selected]) if (!ids.has(id)) this.selected.delete(id);
    if (!this.gm && !this.selected.size && candidates.length) this.selected.add(candidates[0].id);
    clear(box);
    for (const character of candidates) {
      const input = h("input", {
        type: this.gm ? "checkbox" : "radio",
        name: "character",
        value: character.id,
        checked: this.selected.has(character.id),
        onchange: (event) => {
          if (!this.gm) this.selected.clear();
          if (event.target.checked) this.selected.add(character.id);
          else this.selected.delete(character.id);
          this.refreshFields();
          this.updateOdds();
          this.save();
          this.rollbox?.refresh();
        },
      });
      const owner = this.gm ? this.table.usernames.get(character.owner_id) : null;
      box.append(h("label", { class: "pick" }, input, h("span", {}, character.name, owner ? h("small", {}, ` ${owner}`) : null)));
    }
    if (!candidates.length) box.append(h("p", { class: "muted" }, t("select_character")));
    this.refreshFields();
  }

  // Traits the chosen characters have (the union for a GM's call), grouped for the picker.
  refreshFields() {
    const groups = ROLLABLE[this.system];
    const chosen = this.chosen();
    clear(this.picker);
    this.picker.append(h("option", { value: "" }, this.placeholder));
    for (const group of groups) {
      const names = new Set();
      for (const c of chosen) for (const name of Object.keys((c.traits || {})[group] || {})) names.add(name);
      if (!names.size) continue;
      this.picker.append(
        h("optgroup", { label: (S.groups[this.system] || {})[group] || group }, [...names].map((name) => h("option", { value: name, disabled: this.traits.includes(name) }, traitLabel(this.system, name)))),
      );
    }
    this.renderTraits();
    this.refreshSpecialties();
    this.refreshResisters();
    this.showWillpower();
    this.rollbox?.renderFavourites();
  }

  // CofD: who resists (whose Willpower the resistance may spend); any character of the table.
  refreshResisters() {
    const select = $("#f-resister", this.form);
    if (!select) return;
    const previous = select.value;
    clear(select);
    select.append(h("option", { value: "" }, "—"));
    for (const c of this.table.characters) select.append(h("option", { value: c.id, selected: c.id === previous }, c.name));
  }

  // The chosen character's Willpower beside the spend box (the server checks the balance).
  showWillpower() {
    const note = $("#willpower-balance", this.form);
    if (!note) return;
    const chosen = this.chosen();
    const value = chosen.length === 1 ? (chosen[0].resources || {}).willpower : undefined;
    note.textContent = value === undefined ? "" : `· ${t("willpower_left", { n: value })}`;
  }

  addTrait(name) {
    if (this.traits.includes(name)) return;
    const max = MAX_TRAITS[this.system] || 4;
    if (this.traits.length >= max) this.traits.shift();
    this.traits.push(name);
    this.renderTraits();
    this.refreshSpecialties();
    this.updateOdds();
    this.save();
  }

  // Called from a sheet: clicking a trait puts it in the form (and picks its character).
  pick(character, name) {
    if (!this.gm) this.selected.clear();
    if (!this.selected.has(character.id)) {
      this.selected.add(character.id);
      $$("input[name=character]", this.form).forEach((input) => (input.checked = this.selected.has(input.value)));
      this.refreshFields();
      this.rollbox?.refresh();
    }
    this.addTrait(name);
    this.form.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  removeTrait(name) {
    this.traits = this.traits.filter((n) => n !== name);
    this.renderTraits();
    this.refreshSpecialties();
    this.updateOdds();
    this.save();
  }

  // A removed chip took the focus with it: give it to the next chip, or to the picker.
  removeChip(name) {
    const index = this.traits.indexOf(name);
    this.removeTrait(name);
    const buttons = $$(".chip-x", this.form);
    (buttons[Math.min(index, buttons.length - 1)] || this.picker).focus();
  }

  renderTraits() {
    const box = $("#composer-traits", this.form);
    clear(box);
    const none = $("#composer-traits-none", this.form);
    if (none) {
      none.textContent = t("no_traits");
      none.hidden = this.traits.length > 0;
    }
    for (const name of this.traits) {
      const label = traitLabel(this.system, name);
      box.append(
        h(
          "span",
          { class: "trait-chip", role: "listitem" },
          label,
          h("button", { type: "button", class: "chip-x", "aria-label": `× ${label}`, onclick: () => this.removeChip(name) }, "×"),
        ),
      );
    }
    for (const option of $$("option", this.picker)) option.disabled = option.value && this.traits.includes(option.value);
  }

  refreshSpecialties() {
    const select = this.system === "cofd" ? $("#f-specialty", this.form) : this.system === "age" ? $("#f-focus", this.form) : null;
    if (!select) return;
    const previous = select.value;
    const names = new Set();
    for (const c of this.chosen()) {
      const lists = this.system === "cofd" ? (c.traits || {}).specialties || {} : (c.traits || {}).focuses || {};
      for (const trait of this.traits) for (const name of lists[trait] || []) names.add(name);
    }
    clear(select);
    select.append(h("option", { value: "" }, "—"));
    for (const name of names) select.append(h("option", { value: name, selected: name === previous }, traitLabel(this.system, name)));
  }

  // The request the API takes (without the character).
  request() {
    const f = new FormData(this.form);
    const num = (name) => {
      const raw = (f.get(name) ?? "").toString().trim();
      return raw === "" ? null : Number(raw);
    };
    const request = { traits: [...this.traits] };
    const pool = num("pool");
    if (pool) request.pool = pool;
    const modifiers = [];
    const modifier = num("modifier");
    if (modifier) {
      const label = (f.get("modifier_label") || "").toString().trim();
      modifiers.push(label ? { value: modifier, label } : { value: modifier });
    }
    const d6 = num("d6_difficulty");
    if (d6) modifiers.push({ value: d6, group: "difficulty", label: "difficulty" });
    if (modifiers.length) request.modifiers = modifiers;
    const flag = (name) => this.form.elements[name] && this.form.elements[name].checked;
    if (this.system === "storyteller") {
      request.difficulty = num("difficulty") ?? 6;
      if (flag("stressful")) request.stressful = true;
      if (flag("automatic")) request.automatic = true;
      if (flag("not_escalating")) request.not_escalating = true;
      if (flag("willpower")) request.willpower = true;
    } else if (this.system === "cofd") {
      const again = f.get("again");
      request.again = again === "none" ? null : Number(again || 10);
      if (flag("rote")) request.rote = true;
      if (flag("under_pressure")) request.under_pressure = true;
      if (flag("extended")) request.extended = true;
      if (flag("willpower")) request.willpower = true;
      if (f.get("specialty")) request.specialty = f.get("specialty");
      // A resistance: the rating, whose it is, and whether they spend Willpower on it.
      const resister = (f.get("resister") || "").toString();
      if (num("resistance") || resister || flag("resistance_willpower")) {
        request.resistance = { value: num("resistance") || 0 };
        if (resister) request.resistance.character = resister;
        if (flag("resistance_willpower")) request.resistance.willpower = true;
      }
    } else if (this.system === "age") {
      const target = num("target");
      if (target) request.target = target;
      if (f.get("focus")) request.focus = f.get("focus");
      if (flag("focus_required")) request.focus_required = true;
      request.active = Boolean(flag("active"));
    } else if (this.system === "d6pool") {
      if (flag("life_or_death")) request.life_or_death = true;
    }
    const label = (f.get("label") || "").toString().trim();
    if (label) request.label = label;
    const task = (f.get("task") || "").toString().trim();
    if (task) request.task = task;
    request.visibility = f.get("visibility") || "public";
    return request;
  }

  faces() {
    const raw = (new FormData(this.form).get("faces") || "").toString().trim();
    if (!raw) return undefined;
    return raw.split(/[\s,;]+/).filter(Boolean).map(Number);
  }

  async odds() {
    const request = this.request();
    const chosen = this.chosen();
    const token = (this.oddsToken = (this.oddsToken || 0) + 1);
    if (!request.traits.length && !request.pool) {
      this.oddsShown = null;
      clear(this.oddsEl).append(h("p", { class: "muted" }, t("odds_none")));
      return;
    }
    const targets = chosen.length ? chosen.slice(0, 4) : [null];
    const answers = await Promise.all(
      targets.map(async (character) => {
        const body = { ...request };
        delete body.visibility;
        if (character) body.character = character.id;
        const title = targets.length > 1 || this.gm ? t("odds_for", { name: character ? character.name : t("npc") }) : t("odds");
        try {
          return { title, answer: await this.table.api.post("checks/odds/", body) };
        } catch (error) {
          return { title, name: character?.name, error: isNetworkError(error) ? t("no_connection") : error.message };
        }
      }),
    );
    if (token !== this.oddsToken) return;
    // The server answered again: a lost connection the form reported is back.
    if (this.offline && answers.some((a) => a.answer)) this.showError("");
    const shown = JSON.stringify(answers);
    if (shown === this.oddsShown) return;
    this.oddsShown = shown;
    const charts = answers.map(({ title, answer, name, error }) =>
      answer ? oddsChart(this.system, answer, title) : h("p", { class: "muted odds-error" }, name ? `${name}: ` : "", error),
    );
    clear(this.oddsEl).append(...charts);
  }

  // The form's error; `error`'s fields that are on the form are marked, described by it.
  showError(message, error = null) {
    this.errorEl.hidden = !message;
    this.errorEl.textContent = message || "";
    this.offline = Boolean(error && isNetworkError(error));
    for (const el of this.form.querySelectorAll("[aria-invalid]")) {
      el.removeAttribute("aria-invalid");
      if ("errorDescribed" in el.dataset) {
        if (el.dataset.errorDescribed) el.setAttribute("aria-describedby", el.dataset.errorDescribed);
        else el.removeAttribute("aria-describedby");
        delete el.dataset.errorDescribed;
      }
    }
    for (const path of error ? errorFields(error) : []) {
      const field = this.form.elements[path.split(".")[0]];
      if (!field || !field.setAttribute || field === this.picker) continue;
      field.setAttribute("aria-invalid", "true");
      field.dataset.errorDescribed = field.getAttribute("aria-describedby") || "";
      field.setAttribute("aria-describedby", `${field.dataset.errorDescribed} ${this.errorEl.id}`.trim());
    }
  }

  async submit(action) {
    // The button stays enabled (a disabled button drops the focus to <body>); a second press
    // while the first is on its way does nothing.
    if (this.busy) return;
    const chosen = this.chosen();
    const button = action === "call" ? $("#composer-call", this.form) : $("#composer-roll", this.form);
    this.busy = true;
    button.setAttribute("aria-busy", "true");
    this.showError("");
    try {
      const request = await this.checkRequest();
      const unread = this.rollbox?.failure;
      if (!request && answerLost(unread)) {
        // The line could not be read for want of a connection: nothing was sent.
        this.showError(errorText(unread, "no_connection"), unread);
        return;
      }
      if (!request) throw new Error(t("rollbox_refused"));
      if (action === "call") {
        if (!chosen.length) throw new Error(t("select_character"));
        await this.table.api.post("calls/", { characters: chosen.map((c) => c.id), request });
        this.table.refresh.calls();
      } else {
        const faces = this.faces();
        const targets = chosen.length ? chosen : this.gm ? [null] : [];
        if (!targets.length) throw new Error(t("select_character"));
        await this.rollRequests(
          targets.map((character) => ({
            ...request,
            client_seed: clientSeed(),
            ...(character ? { character: character.id } : {}),
            ...(faces ? { faces } : {}),
          })),
        );
      }
    } catch (error) {
      this.showError(errorText(error, action === "call" ? "no_connection" : "no_connection_roll"), error);
    } finally {
      this.busy = false;
      button.removeAttribute("aria-busy");
      if (!this.form.contains(document.activeElement)) button.focus({ preventScroll: true });
    }
  }

  // Roll each request (the form's, or the roll box's); the results show under the button. A roll
  // whose answer never came (no connection) may have been made: asked again unchanged, it goes
  // with the same key and client seed (api.post), so the server does not roll it twice.
  async rollRequests(requests) {
    const checks = [];
    try {
      for (const request of requests) {
        const check = await this.table.api.post("checks/", request);
        this.table.showCheck(check);
        checks.push(check);
      }
    } catch (error) {
      this.showError(errorText(error, "no_connection_roll"), error);
      return;
    } finally {
      if (checks.length) {
        this.showResult(checks);
        this.table.refresh.state();
      }
    }
    this.showError("");
    if (this.form.elements.faces) this.form.elements.faces.value = "";
    if (this.form.elements.willpower) this.form.elements.willpower.checked = false;
    if (this.form.elements.resistance_willpower) this.form.elements.resistance_willpower.checked = false;
    this.updateOdds(); // without the Willpower just cleared
  }

  // The roller sees what they rolled beside the button they pressed (on a phone the feed is
  // a screen away); the card itself is in the feed.
  showResult(checks) {
    const box = $("#composer-result", this.form);
    if (!box) return;
    this.resultSeqs = checks.map((check) => check.seq);
    this.renderResult();
    if (!box.hidden) box.scrollIntoView({ block: "nearest", behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  }

  // The box follows its rolls as their cards in the feed do (a follow-up taken, a reveal): it
  // shows the table's copy of each, redrawn when that copy changes.
  renderResult() {
    const box = $("#composer-result", this.form);
    if (!box || !this.resultSeqs) return;
    const checks = this.resultSeqs.map((seq) => this.table.checks.get(seq)).filter(Boolean);
    rebuildIfChanged(box, checks.map(lastRollKey), () => {
      clear(box).append(...checks.map(lastRoll).filter(Boolean));
      box.hidden = !box.childElementCount;
    });
  }
}
