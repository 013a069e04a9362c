// The roll form (players) and the call for a check (GM): traits from the sheet, the system's own
// fields, the odds before anything is rolled, then roll (or call).
import { errorText } from "./api.js";
import { $, $$, clear, debounce, h } from "./dom.js";
import { S, t } from "./i18n.js";
import { oddsChart } from "./odds.js";

export const ROLLABLE = {
  d6pool: ["attributes", "abilities"],
  storyteller: ["attributes", "abilities"],
  cofd: ["attributes", "skills"],
  age: ["abilities"],
  nice_damnit: ["areas", "skills"],
};
const MAX_TRAITS = { age: 1 };

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
    // Words and faces do not change the odds; everything else does.
    const quiet = new Set(["label", "modifier_label", "faces", "visibility"]);
    form.addEventListener("input", (event) => {
      if (!quiet.has(event.target.name)) this.updateOdds();
    });
    form.addEventListener("change", (event) => {
      if (event.target === this.picker) {
        if (this.picker.value) this.addTrait(this.picker.value);
        this.picker.value = "";
      }
      if (!quiet.has(event.target.name)) this.updateOdds();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const action = event.submitter?.value || "roll";
      this.submit(action);
    });
    table.on("characters", () => this.renderCharacters());
    this.renderCharacters();
  }

  // Characters this form can roll for: mine (players), everyone's (GM).
  candidates() {
    return this.table.characters.filter((c) => this.gm || c.owner_id === this.table.me.id);
  }

  chosen() {
    return this.candidates().filter((c) => this.selected.has(c.id));
  }

  renderCharacters() {
    const box = $("#composer-characters", this.form);
    const candidates = this.candidates();
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
        h("optgroup", { label: (S.groups[this.system] || {})[group] || group }, [...names].map((name) => h("option", { value: name, disabled: this.traits.includes(name) }, name))),
      );
    }
    this.renderTraits();
    this.refreshSpecialties();
  }

  addTrait(name) {
    if (this.traits.includes(name)) return;
    const max = MAX_TRAITS[this.system] || 4;
    if (this.traits.length >= max) this.traits.shift();
    this.traits.push(name);
    this.renderTraits();
    this.refreshSpecialties();
    this.updateOdds();
  }

  // Called from a sheet: clicking a trait puts it in the form (and picks its character).
  pick(character, name) {
    if (!this.gm) this.selected.clear();
    if (!this.selected.has(character.id)) {
      this.selected.add(character.id);
      $$("input[name=character]", this.form).forEach((input) => (input.checked = this.selected.has(input.value)));
      this.refreshFields();
    }
    this.addTrait(name);
    this.form.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  removeTrait(name) {
    this.traits = this.traits.filter((n) => n !== name);
    this.renderTraits();
    this.refreshSpecialties();
    this.updateOdds();
  }

  renderTraits() {
    const box = $("#composer-traits", this.form);
    clear(box);
    if (!this.traits.length) box.append(h("span", { class: "muted hint" }, t("no_traits")));
    for (const name of this.traits) {
      box.append(
        h(
          "span",
          { class: "trait-chip", role: "listitem" },
          name,
          h("button", { type: "button", class: "chip-x", "aria-label": `× ${name}`, onclick: () => this.removeTrait(name) }, "×"),
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
    for (const name of names) select.append(h("option", { value: name, selected: name === previous }, name));
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
    } else if (this.system === "cofd") {
      const again = f.get("again");
      request.again = again === "none" ? null : Number(again || 10);
      if (flag("rote")) request.rote = true;
      if (flag("under_pressure")) request.under_pressure = true;
      if (flag("extended")) request.extended = true;
      if (f.get("specialty")) request.specialty = f.get("specialty");
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
    if (!request.traits.length && !request.pool) {
      clear(this.oddsEl).append(h("p", { class: "muted" }, t("odds_none")));
      return;
    }
    const targets = chosen.length ? chosen.slice(0, 4) : [null];
    const token = (this.oddsToken = (this.oddsToken || 0) + 1);
    const charts = await Promise.all(
      targets.map(async (character) => {
        const body = { ...request };
        delete body.visibility;
        if (character) body.character = character.id;
        try {
          const answer = await this.table.api.post("checks/odds/", body);
          const title = targets.length > 1 || this.gm ? t("odds_for", { name: character ? character.name : t("npc") }) : t("odds");
          return oddsChart(this.system, answer, title);
        } catch (error) {
          return h("p", { class: "muted odds-error" }, character ? `${character.name}: ` : "", error.message);
        }
      }),
    );
    if (token !== this.oddsToken) return;
    clear(this.oddsEl).append(...charts);
  }

  showError(message) {
    this.errorEl.hidden = !message;
    this.errorEl.textContent = message || "";
  }

  async submit(action) {
    const request = this.request();
    const chosen = this.chosen();
    const button = action === "call" ? $("#composer-call", this.form) : $("#composer-roll", this.form);
    button.disabled = true;
    this.showError("");
    try {
      if (action === "call") {
        if (!chosen.length) throw new Error(t("select_character"));
        await this.table.api.post("calls/", { characters: chosen.map((c) => c.id), request });
        this.table.refresh.calls();
      } else {
        const faces = this.faces();
        const targets = chosen.length ? chosen : this.gm ? [null] : [];
        if (!targets.length) throw new Error(t("select_character"));
        for (const character of targets) {
          const body = { ...request };
          if (character) body.character = character.id;
          if (faces) body.faces = faces;
          const check = await this.table.api.post("checks/", body);
          this.table.checks.set(check.seq, check);
        }
        this.table.renderFeed();
        this.table.refresh.state();
        if (this.form.elements.faces) this.form.elements.faces.value = "";
      }
    } catch (error) {
      this.showError(errorText(error));
    } finally {
      button.disabled = false;
    }
  }
}
