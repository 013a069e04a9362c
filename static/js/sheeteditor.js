// The character editor built from the system's sheet template (the server's, docs: the sheet
// template in the README): an input per trait with its dots, custom traits where the group is
// open, specialties/focuses as chips, resources within their limits, and every error the server
// finds shown at once beside its field, in the page's language.
import { errorText } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

let uid = 0;

function dotsPreview(value, count) {
  const n = Math.max(0, Number(value) || 0);
  return `${"●".repeat(Math.min(n, Math.max(count, n)))}${"○".repeat(Math.max(0, count - n))}`;
}

// One trait: its label, a number (or a rank) and, for dots, the dots it draws.
function traitRow(group, trait, value, rankValues) {
  const id = `se-${(uid += 1)}`;
  const path = `traits.${group.key}.${trait.key}`;
  let input;
  if (group.kind === "rank") {
    input = h(
      "select",
      { id, "data-path": path, "data-group": group.key, "data-trait": trait.key },
      h("option", { value: "" }, "—"),
      Object.entries(rankValues || {}).map(([key, info]) =>
        h("option", { value: key, selected: key === value }, typeof info === "object" ? info.label || key : key),
      ),
    );
  } else {
    input = h("input", {
      id,
      type: "number",
      inputmode: "numeric",
      min: group.min,
      max: group.max,
      value: value ?? "",
      placeholder: String(group.kind === "dots" ? 0 : group.default ?? 0),
      "data-path": path,
      "data-group": group.key,
      "data-trait": trait.key,
    });
  }
  const dots = group.kind === "dots" ? h("span", { class: "dots-preview", "aria-hidden": "true" }, dotsPreview(value, group.dots || 5)) : null;
  if (dots) input.addEventListener("input", () => (dots.textContent = dotsPreview(input.value, group.dots || 5)));
  return h("div", { class: "se-trait" }, h("label", { for: id }, trait.label || trait.key), input, dots, h("span", { class: "field-error", id: `${id}-error`, hidden: true }));
}

function customRow(group, rankValues, onRemove) {
  const name = h("input", { type: "text", maxlength: 60, class: "se-custom-name", "aria-label": t("trait_name") });
  const row = traitRow(group, { key: "", label: "" }, "", rankValues);
  const label = row.querySelector("label");
  label.replaceWith(name);
  const input = row.querySelector("input, select");
  input.setAttribute("aria-label", t("trait_value"));
  name.addEventListener("input", () => {
    input.dataset.trait = name.value.trim();
    input.dataset.path = `traits.${group.key}.${name.value.trim()}`;
  });
  row.append(h("button", { type: "button", class: "btn btn-small btn-ghost", "aria-label": t("remove"), onclick: () => (row.remove(), onRemove()) }, "×"));
  return row;
}

function chipsGroup(group, template, current) {
  const of = template.groups.find((g) => g.key === group.of);
  const chips = h("ul", { class: "se-chips" });
  const value = {};
  const draw = () => {
    chips.replaceChildren();
    for (const [trait, names] of Object.entries(value)) {
      for (const name of names) {
        chips.append(
          h(
            "li",
            { class: "tag chip-edit" },
            `${labelOf(of, trait)}: ${name}`,
            h("button", {
              type: "button",
              class: "chip-x",
              "aria-label": `${t("remove")}: ${name}`,
              onclick: () => {
                value[trait] = value[trait].filter((n) => n !== name);
                if (!value[trait].length) delete value[trait];
                draw();
              },
            }, "×"),
          ),
        );
      }
    }
  };
  for (const [trait, names] of Object.entries(current || {})) value[trait] = [...names];
  const id = `se-${(uid += 1)}`;
  const traitSelect = h("select", { id: `${id}-trait`, "aria-label": of ? of.label : group.of }, (of ? of.traits : []).map((tr) => h("option", { value: tr.key }, tr.label || tr.key)));
  const name = h("input", { id: `${id}-name`, type: "text", maxlength: 60, "aria-label": group.label, "data-path": `traits.${group.key}` });
  const add = () => {
    const text = name.value.trim();
    if (!text) return;
    (value[traitSelect.value] ||= []).includes(text) || value[traitSelect.value].push(text);
    name.value = "";
    draw();
    name.focus();
  };
  name.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      add();
    }
  });
  draw();
  const box = h(
    "fieldset",
    { class: "se-group se-chips-group", "data-group": group.key },
    h("legend", {}, group.label),
    chips,
    h("div", { class: "input-row" }, traitSelect, name, h("button", { type: "button", class: "btn btn-small", onclick: add }, t("add"))),
    h("span", { class: "field-error", hidden: true }),
  );
  box.collect = () => value;
  return box;
}

function labelOf(group, key) {
  return ((group && group.traits) || []).find((tr) => tr.key === key)?.label || key;
}

function traitGroup(group, template, current) {
  const values = { ...(current || {}) };
  const box = h("fieldset", { class: `se-group se-${group.kind}`, "data-group": group.key }, h("legend", {}, group.label));
  const sections = group.sections && group.sections.length ? group.sections : [{ key: null, label: null }];
  const listed = new Set(group.traits.map((tr) => tr.key));
  for (const section of sections) {
    const traits = group.traits.filter((tr) => (section.key === null ? true : tr.section === section.key));
    if (!traits.length) continue;
    const column = h("div", { class: "se-section" }, section.label ? h("h5", {}, section.label) : null);
    for (const trait of traits) column.append(traitRow(group, trait, values[trait.key], template.rank_values));
    box.append(column);
  }
  // Traits on the sheet that the template does not list (open groups): editable as custom rows.
  const custom = h("div", { class: "se-custom" });
  for (const [key, value] of Object.entries(values)) {
    if (listed.has(key)) continue;
    const row = traitRow(group, { key, label: key }, value, template.rank_values);
    custom.append(row);
  }
  box.append(custom);
  if (group.open) {
    box.append(
      h("button", {
        type: "button",
        class: "btn btn-small btn-ghost se-add",
        onclick: () => {
          const row = customRow(group, template.rank_values, () => {});
          custom.append(row);
          row.querySelector("input")?.focus();
        },
      }, t("add_trait_named", { group: group.label })),
    );
  }
  box.collect = () => {
    const out = {};
    for (const input of box.querySelectorAll("[data-trait]")) {
      const key = (input.dataset.trait || "").trim();
      if (!key || input.value === "") continue;
      out[key] = group.kind === "rank" ? input.value : Number(input.value);
    }
    return out;
  };
  return box;
}

// The resources a sheet form sends: all of them for a new character; for one being edited only
// those whose value the form changed, so a Willpower a roll spent while it was open is not set
// back (the server records only a change, and knows nothing of the form's staleness).
export function changedResources(inputs, opened) {
  const values = Object.entries(inputs).map(([key, input]) => [key, Number(input.value || 0)]);
  return Object.fromEntries(opened ? values.filter(([key, value]) => value !== opened[key]) : values);
}

export function templateEditor(table, character, template, { onDone }) {
  const id = `se-${(uid += 1)}`;
  const creating = !character;
  const name = h("input", { id: `${id}-name`, required: true, maxlength: 120, value: character ? character.name : "", "data-path": "name" });
  const fields = [h("div", { class: "field" }, h("label", { for: name.id }, t("name")), name, h("span", { class: "field-error", hidden: true }))];
  let owner = null;
  if (table.isGm) {
    owner = h(
      "select",
      { id: `${id}-owner`, "data-path": "owner_id" },
      h("option", { value: "" }, t("nobody")),
      table.members.filter((m) => m.role !== "observer").map((m) => h("option", { value: m.user_id, selected: character ? character.owner_id === m.user_id : false }, m.username)),
    );
    fields.push(h("div", { class: "field" }, h("label", { for: owner.id }, t("owner")), owner));
  }
  const groups = template.groups.map((group) =>
    group.kind === "chips" ? chipsGroup(group, template, (character?.traits || {})[group.key]) : traitGroup(group, template, (character?.traits || {})[group.key]),
  );
  // Resources: the GM's at any time; a player's only when creating their character.
  const resources = {};
  const opened = {}; // each resource as the form showed it
  const resourceRows = [];
  if (table.isGm || creating) {
    for (const res of template.resources || []) {
      const input = h("input", {
        id: `${id}-res-${res.key}`,
        type: "number",
        min: res.min,
        max: table.isGm ? res.max : res.start_max ?? res.max,
        value: ((character || {}).resources || {})[res.key] ?? res.default ?? 0,
        "data-path": `resources.${res.key}`,
      });
      resources[res.key] = input;
      opened[res.key] = Number(input.value || 0);
      resourceRows.push(h("div", { class: "field small" }, h("label", { for: input.id }, res.label || res.key), input, h("span", { class: "field-error", hidden: true })));
    }
  }
  const summary = h("div", { class: "form-error se-summary", role: "alert", hidden: true });
  const form = h(
    "form",
    {
      class: "character-editor sheet-editor",
      novalidate: true,
      onsubmit: async (event) => {
        event.preventDefault();
        const traits = {};
        for (const group of groups) traits[group.dataset.group] = group.collect();
        const body = { name: name.value.trim(), traits };
        if (owner) body.owner_id = owner.value ? Number(owner.value) : null;
        const resourcesSent = changedResources(resources, character ? opened : null);
        if (Object.keys(resourcesSent).length) body.resources = resourcesSent;
        showErrors(form, summary, null);
        try {
          if (character) await table.api.patch(`characters/${character.id}/`, body);
          else await table.api.post("characters/", body);
          table.refresh.characters();
          table.refresh.state();
          onDone();
        } catch (error) {
          showErrors(form, summary, error);
        }
      },
    },
    h("h3", {}, character ? `${t("edit")}: ${character.name}` : t("new_character")),
    summary,
    fields,
    groups,
    resourceRows.length ? h("fieldset", { class: "se-group se-resources" }, h("legend", {}, t("sheet_resources")), resourceRows) : null,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "btn btn-primary" }, t("save")),
      h("button", { type: "button", class: "btn btn-ghost", onclick: () => onDone() }, t("cancel")),
    ),
  );
  return form;
}

// Every message beside its field (keys are dotted paths: traits.skills.Brawl, resources.beats,
// name); what has no field goes to the summary, which also counts them all.
function showErrors(form, summary, error) {
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  for (const el of form.querySelectorAll(".field-error")) {
    el.hidden = true;
    el.textContent = "";
  }
  summary.replaceChildren();
  summary.hidden = true;
  if (!error) return;
  const body = error.body && typeof error.body === "object" ? error.body : null;
  if (!body) {
    summary.hidden = false;
    summary.textContent = errorText(error);
    return;
  }
  const loose = [];
  let first = null;
  for (const [path, value] of Object.entries(body)) {
    if (path === "code") continue;
    const text = Array.isArray(value) ? value.join(" ") : String(value);
    const field = [...form.querySelectorAll("[data-path]")].find((el) => el.dataset.path === path)
      || [...form.querySelectorAll("[data-path]")].find((el) => path.startsWith(`${el.dataset.path}.`));
    const slot = field?.closest(".se-trait, .field, .se-chips-group")?.querySelector(".field-error");
    if (field && slot) {
      field.setAttribute("aria-invalid", "true");
      slot.id ||= `${field.id || (uid += 1)}-error`;
      field.setAttribute("aria-describedby", slot.id);
      slot.textContent = text;
      slot.hidden = false;
      first ||= field;
    } else loose.push(text);
  }
  const count = Object.keys(body).filter((k) => k !== "code").length;
  summary.hidden = false;
  summary.append(h("p", {}, t("fix_fields", { n: count })), loose.length ? h("ul", {}, loose.map((text) => h("li", {}, text))) : null);
  first?.focus();
}
