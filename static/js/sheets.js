// Character sheets laid out per system (dots for the World of Darkness games, ranks for
// Nice!/Damnit!, focuses under AGE abilities), and the editor that creates and changes them.
import { errorText } from "./api.js";
import { clear, h, jsonScript, rebuildIfChanged } from "./dom.js";
import { S, t, traitLabel } from "./i18n.js";
import { ROLLABLE } from "./composer.js";
import { changedResources, templateEditor } from "./sheeteditor.js";
import { flag, flagLabel } from "./panels.js";

// The system's sheet template, where the server sends one (then the editor is built from it).
const TEMPLATE = jsonScript("sheet-template");

export function editorFor(table, character, options) {
  return TEMPLATE ? templateEditor(table, character, TEMPLATE, options) : characterEditor(table, character, options);
}

const DOTS = new Set(["storyteller", "cofd"]);

function dots(value, max = 5) {
  const top = Math.max(max, value);
  const filled = "●".repeat(Math.max(0, value));
  const empty = "○".repeat(Math.max(0, top - value));
  return h("span", { class: "dots", "aria-hidden": "true" }, h("span", { class: "on" }, filled), h("span", { class: "off" }, empty));
}

function valueView(system, group, value) {
  if (system === "nice_damnit" && group === "skills") {
    const bonus = S.rank_bonus[value] ?? 0;
    return h("span", { class: "rank" }, `${S.ranks[value] || value}${bonus ? ` +${bonus}` : ""}`);
  }
  if (DOTS.has(system)) return [dots(value), h("span", { class: "sr-only" }, ` ${value}`)];
  if (system === "age") return h("span", { class: "num" }, value > 0 ? `+${value}` : String(value));
  return h("span", { class: "num" }, String(value));
}

export function sheetCard(character, table, { onTrait, onEdit, flags = true } = {}) {
  const system = table.campaign.system;
  const groups = S.trait_groups[system] || [];
  const rollable = new Set(ROLLABLE[system]);
  const traits = character.traits || {};
  const extras = system === "cofd" ? traits.specialties || {} : system === "age" ? traits.focuses || {} : {};
  const stateRow = (table.state.characters || []).find((c) => c.id === character.id) || {};
  const sections = [];
  for (const group of groups) {
    if (!rollable.has(group)) continue;
    const values = traits[group] || {};
    const items = Object.entries(values).map(([name, value]) => {
      const label = traitLabel(system, name);
      const body = [h("span", { class: "trait-name" }, label), valueView(system, group, value)];
      // AGE's focuses are listed (named in the reader's language); CofD's specialties are free text.
      const tags = (extras[name] || []).map((x) => h("span", { class: "tag tiny" }, traitLabel(system, x)));
      const control = onTrait
        ? h("button", { type: "button", class: "trait", title: t("add_to_roll", { name: label }), onclick: () => onTrait(character, name) }, body)
        : h("span", { class: "trait" }, body);
      return h("li", {}, control, tags.length ? h("span", { class: "trait-extras" }, tags) : null);
    });
    if (!items.length) continue;
    sections.push(h("div", { class: "sheet-group" }, h("h4", {}, (S.groups[system] || {})[group] || group), h("ul", {}, items)));
  }
  const resources = Object.entries(character.resources || {}).map(([name, value]) =>
    h(
      "span",
      { class: `resource res-${name}` },
      h("span", { class: "res-name" }, S.resources[name] || name),
      name === "beats" ? dots(value % 5 === 0 && value ? 5 : value % 5, 5) : null,
      h("strong", { class: "res-value" }, String(value)),
    ),
  );
  // The allowances the campaign's options track, as the server lists them; the GM dashboard
  // shows them in its rule-state panel instead.
  const rules = flags ? (stateRow.flags || []).map((f) => flag(flagLabel(f), f)) : [];
  const owner = table.usernames.get(character.owner_id);
  return h(
    "section",
    { class: `sheet sheet-${system}`, "data-character": character.id, "aria-label": character.name },
    h(
      "header",
      { class: "sheet-head" },
      h("h3", {}, character.name),
      h("span", { class: "muted" }, owner || t("nobody")),
      onEdit ? h("button", { type: "button", class: "btn btn-small btn-ghost", onclick: () => onEdit(character) }, t("edit")) : null,
    ),
    resources.length ? h("div", { class: "resources" }, resources) : null,
    rules.length ? h("div", { class: "rule-flags" }, rules) : null,
    h("div", { class: "sheet-groups" }, sections),
  );
}

// --- the editor -----------------------------------------------------------------------------

function groupText(system, group, values) {
  return Object.entries(values || {})
    .map(([name, value]) => (Array.isArray(value) ? `${name}: ${value.join(", ")}` : `${name} ${value}`))
    .join("\n");
}

function parseGroup(text, kind) {
  const out = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    if (kind === "names") {
      const [name, rest = ""] = line.split(":");
      out[name.trim()] = rest.split(",").map((x) => x.trim()).filter(Boolean);
      continue;
    }
    const match = line.match(/^(.*?)[\s:=]+(-?\w+)$/);
    if (!match) {
      out[line] = kind === "rank" ? "perk" : 0;
      continue;
    }
    out[match[1].trim()] = kind === "rank" ? match[2] : Number(match[2]);
  }
  return out;
}

const KIND = { specialties: "names", focuses: "names" };

export function characterEditor(table, character, { onDone }) {
  const system = table.campaign.system;
  const groups = S.trait_groups[system] || [];
  const id = character ? character.id : "new";
  const fields = [];
  const name = h("input", { id: `ce-${id}-name`, name: "name", required: true, maxlength: 120, value: character ? character.name : "" });
  fields.push(h("div", { class: "field" }, h("label", { for: name.id }, t("name")), name));
  let owner = null;
  if (table.isGm) {
    owner = h(
      "select",
      { id: `ce-${id}-owner` },
      h("option", { value: "" }, t("nobody")),
      table.members
        .filter((m) => m.role !== "observer")
        .map((m) => h("option", { value: m.user_id, selected: character ? character.owner_id === m.user_id : false }, m.username)),
    );
    fields.push(h("div", { class: "field" }, h("label", { for: owner.id }, t("owner")), owner));
  }
  const areas = {};
  for (const group of groups) {
    const kind = KIND[group] || (system === "nice_damnit" && group === "skills" ? "rank" : "int");
    const area = h("textarea", { id: `ce-${id}-${group}`, rows: 4, spellcheck: "false" });
    area.value = groupText(system, group, character ? (character.traits || {})[group] : {});
    areas[group] = [area, kind];
    const hint = t(kind === "names" ? "traits_hint_names" : kind === "rank" ? "traits_hint_rank" : "traits_hint_int");
    fields.push(
      h("div", { class: "field" }, h("label", { for: area.id }, (S.groups[system] || {})[group] || group), area, h("small", { class: "muted" }, hint)),
    );
  }
  const resources = {};
  const opened = {}; // each resource as the form showed it
  if (table.isGm) {
    const names = Object.keys((character || {}).resources || {});
    const defaults = { cofd: ["beats", "willpower"], storyteller: ["willpower"], age: ["fortune"] }[system] || [];
    for (const res of new Set([...defaults, ...names])) {
      const input = h("input", { id: `ce-${id}-res-${res}`, type: "number", min: 0, max: 999, value: ((character || {}).resources || {})[res] ?? 0 });
      resources[res] = input;
      opened[res] = Number(input.value || 0);
      fields.push(h("div", { class: "field small" }, h("label", { for: input.id }, S.resources[res] || res), input));
    }
  }
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const form = h(
    "form",
    {
      class: "character-editor",
      onsubmit: async (event) => {
        event.preventDefault();
        const traits = {};
        for (const [group, [area, kind]] of Object.entries(areas)) traits[group] = parseGroup(area.value, kind);
        const body = { name: name.value.trim(), traits };
        if (table.isGm) {
          body.owner_id = owner.value ? Number(owner.value) : null;
          const resourcesSent = changedResources(resources, character ? opened : null);
          if (Object.keys(resourcesSent).length) body.resources = resourcesSent;
        }
        try {
          if (character) await table.api.patch(`characters/${character.id}/`, body);
          else await table.api.post("characters/", body);
          table.refresh.characters();
          table.refresh.state();
          onDone();
        } catch (err) {
          error.hidden = false;
          error.textContent = errorText(err);
        }
      },
    },
    h("h3", {}, character ? `${t("edit")}: ${character.name}` : t("new_character")),
    fields,
    error,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "btn btn-primary" }, t("save")),
      h("button", { type: "button", class: "btn btn-ghost", onclick: () => onDone() }, t("cancel")),
    ),
  );
  return form;
}

export function renderSheets(container, table, options) {
  const characters = options.filter ? table.characters.filter(options.filter) : table.characters;
  const owners = characters.map((c) => table.usernames.get(c.owner_id));
  const key = [characters, owners, table.state.characters, table.campaign.options];
  rebuildIfChanged(container, key, () => sheets(container, table, characters, options));
}

function sheets(container, table, characters, options) {
  clear(container);
  if (!characters.length) container.append(h("p", { class: "muted" }, t("no_characters")));
  for (const character of characters) container.append(sheetCard(character, table, options));
}
