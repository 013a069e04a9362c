// The player page: my sheets, the roll form with its odds, the GM's calls, the live feed.
import { $, clear } from "./dom.js";
import { Composer } from "./composer.js";
import { renderPlayerCalls, renderSessionBar } from "./panels.js";
import { editorFor, renderSheets } from "./sheets.js";
import { Table } from "./table.js";

const table = new Table();
const form = $("#composer");
const composer = form ? new Composer(table, form) : null;
const mine = (character) => character.acts_for; // the server's decision (`acts_for`)

function sheets() {
  renderSheets($("#sheets"), table, {
    filter: mine,
    onTrait: composer ? (character, name) => composer.pick(character, name) : null,
    onEdit: composer ? (character) => edit(character) : null,
  });
}

function edit(character) {
  const box = $("#character-editor");
  clear(box);
  const editor = editorFor(table, character, { onDone: () => clear(box) });
  box.append(editor);
  editor.querySelector("input")?.focus();
}

$("#new-character")?.addEventListener("click", () => edit(null));

table.on("characters", () => (sheets(), renderPlayerCalls(table)));
table.on("state", sheets);
table.on("members", sheets);
table.on("calls", () => renderPlayerCalls(table));
table.on("checks", () => renderPlayerCalls(table)); // a call's result follows its roll
table.on("campaign", () => renderSessionBar(table));

renderSessionBar(table);
sheets();
table.start();
