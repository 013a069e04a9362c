// The GM dashboard: set up the campaign, run the session, call for checks, watch the feed.
import { errorText } from "./api.js";
import { $, clear } from "./dom.js";
import { t } from "./i18n.js";
import { Composer } from "./composer.js";
import { renderGmCalls, renderMembers, renderSessionBar, renderState } from "./panels.js";
import { editorFor, renderSheets } from "./sheets.js";
import { Table } from "./table.js";

const table = new Table();
const composer = new Composer(table, $("#composer"));

function sheets() {
  renderSheets($("#sheets"), table, {
    onTrait: (character, name) => composer.pick(character, name),
    onEdit: (character) => edit(character),
    flags: false,
  });
}

function edit(character) {
  const box = $("#character-editor");
  clear(box);
  const form = editorFor(table, character, { onDone: () => clear(box) });
  box.append(form);
  form.querySelector("input")?.focus();
}

$("#new-character").addEventListener("click", () => edit(null));

table.on("characters", sheets);
table.on("state", () => (renderState(table), sheets()));
table.on("checks", () => renderState(table));
table.on("members", () => (renderMembers(table), sheets(), composer.renderCharacters()));
table.on("presence", () => renderMembers(table));
table.on("calls", () => renderGmCalls(table));
table.on("campaign", () => (renderSessionBar(table), renderState(table)));

// Invite link
$("#invite-copy").addEventListener("click", async () => {
  const input = $("#invite-link");
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    input.select();
    document.execCommand("copy");
  }
  table.toast(t("copied"));
});
$("#invite-renew").addEventListener("click", async () => {
  try {
    const campaign = await table.api.post("invite/");
    const input = $("#invite-link");
    input.value = input.value.replace(/\/join\/[^/]+\//, `/join/${campaign.invite_code}/`);
    table.toast(t("renewed"));
  } catch (error) {
    table.toast(errorText(error), "error");
  }
});

// Campaign setup: rename and change rule options (each change is an event).
$("#setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const status = $("#setup-status");
  const options = {};
  for (const row of form.querySelectorAll("[data-option]")) {
    const name = row.dataset.option;
    const input = form.elements[name];
    if (row.dataset.control === "checkbox") options[name] = input.checked;
    else if (row.dataset.control === "number") options[name] = Number(input.value);
    else options[name] = input.value;
  }
  try {
    table.campaign = await table.api.patch("", { name: form.elements.name.value, options });
    status.textContent = t("saved");
    table.emit("campaign");
    table.refreshControls();
  } catch (error) {
    status.textContent = errorText(error);
  }
});

renderSessionBar(table);
renderState(table);
renderMembers(table);
sheets();
table.start();
