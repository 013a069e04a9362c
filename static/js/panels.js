// The panels around the feed: session bar, calls for a check, rule state, members and presence.
import { errorText } from "./api.js";
import { $, clear, h, rebuildIfChanged } from "./dom.js";
import { clientSeed } from "./entropy.js";
import { S, t, traitLabel } from "./i18n.js";
import { oddsChart } from "./odds.js";
import { lastRoll, lastRollKey } from "./render.js";

// --- session, chapter, scene ------------------------------------------------------------------

export function renderSessionBar(table) {
  const bar = $("#sessionbar");
  if (!bar) return;
  const c = table.campaign;
  rebuildIfChanged(bar, [c.session, c.chapter, c.scene, c.system], () => sessionBar(table, bar));
}

function sessionBar(table, bar) {
  clear(bar);
  const c = table.campaign;
  const periods = [
    ["session", c.session, t("no_session")],
    ["chapter", c.chapter, t("no_chapter")],
  ];
  // Scenes matter to one rule (CofD's dramatic failure once per scene); show them there.
  if (c.scene || (table.isGm && c.system === "cofd")) periods.push(["scene", c.scene, t("no_scene")]);
  for (const [kind, period, none] of periods) {
    const label = period ? `${t(`${kind}_n`, { n: period.number })}${period.title ? ` · ${period.title}` : ""}` : none;
    const pieces = [h("span", { class: `period-state ${period ? "open" : "closed"}`, "aria-hidden": "true" }), h("span", { class: "period-label" }, label)];
    if (table.isGm) {
      if (period) {
        pieces.push(
          h("button", { type: "button", class: "btn btn-small btn-ghost", onclick: () => endPeriod(table, kind) }, t(`end_${kind}`)),
        );
      } else {
        const input = h("input", { type: "text", maxlength: 200, placeholder: t("title_optional"), "aria-label": t("title_for", { what: t(`${kind}_n`, { n: "" }).trim() }), class: "period-title" });
        pieces.push(
          h(
            "form",
            { class: "inline period-start", onsubmit: (e) => (e.preventDefault(), startPeriod(table, kind, input.value)) },
            input,
            h("button", { type: "submit", class: "btn btn-small" }, t(`start_${kind}`)),
          ),
        );
      }
    }
    bar.append(h("div", { class: `period period-${kind}` }, pieces));
  }
  if (!c.session && !table.isGm) bar.append(h("p", { class: "muted period-hint" }, t("rolls_need_session")));
}

async function startPeriod(table, kind, title) {
  try {
    await table.api.post(`${kind}s/`, { title: title || "" });
    table.refresh.campaign();
    table.refresh.state();
  } catch (error) {
    table.toast(errorText(error), "error");
  }
}

async function endPeriod(table, kind) {
  const chapter = table.campaign.chapter;
  let also = [];
  if (kind === "session") {
    // The chapter outlives the session unless the GM ends it too: ask, rather than guess.
    const answer = chapter
      ? await choose(t("confirm_end_session_chapter", { n: chapter.number }), [
          ["both", t("end_session_and_chapter"), "btn-primary"],
          ["session", t("end_session_only")],
          ["", t("cancel"), "btn-ghost"],
        ])
      : await choose(t("confirm_end_session"), [
          ["session", t("end_session"), "btn-primary"],
          ["", t("cancel"), "btn-ghost"],
        ]);
    if (!answer) return;
    if (answer === "both") also = ["chapter"];
  } else if (kind === "chapter") {
    const answer = await choose(t("confirm_end_chapter"), [
      ["chapter", t("end_chapter"), "btn-primary"],
      ["", t("cancel"), "btn-ghost"],
    ]);
    if (!answer) return;
  }
  try {
    for (const what of [...also, kind]) await table.api.post(`${what}s/end/`);
    table.refresh.campaign();
    table.refresh.state();
  } catch (error) {
    table.toast(errorText(error), "error");
  }
}

// A modal question with buttons; resolves to the chosen value, or null (Cancel, Escape).
export function choose(question, choices) {
  return new Promise((resolve) => {
    const id = `ask-${Date.now()}`;
    const dialog = h(
      "dialog",
      { class: "ask", "aria-labelledby": id },
      h("p", { id }, question),
      h(
        "form",
        { method: "dialog", class: "actions" },
        choices.map(([value, label, kind]) => h("button", { value, class: `btn ${kind || ""}` }, label)),
      ),
    );
    const opener = document.activeElement;
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue || null);
      dialog.remove();
      opener?.focus?.();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// --- calls for a check ------------------------------------------------------------------------

function characterName(table, id) {
  return (table.characters.find((c) => c.id === id) || {}).name || "?";
}

export function renderGmCalls(table) {
  const box = $("#calls");
  if (!box) return;
  clear(box);
  if (!table.calls.length) return;
  box.append(h("h3", {}, t("open_calls")));
  for (const call of table.calls) {
    const names = call.characters.map((id) =>
      h("li", { class: id in call.answered ? "answered" : "waiting" }, characterName(table, id), " — ", id in call.answered ? `${t("call_answered")} #${call.answered[id]}` : t("waiting")),
    );
    const request = call.request || {};
    box.append(
      h(
        "div",
        { class: "call-card", "data-call": call.id },
        h("p", { class: "call-what" }, traitsText(table, request) || "—", request.label ? ` — ${request.label}` : ""),
        h("ul", { class: "call-who" }, names),
        h(
          "button",
          {
            type: "button",
            class: "btn btn-small btn-ghost",
            onclick: async () => {
              try {
                await table.api.post(`calls/${call.id}/close/`);
                table.refresh.calls();
              } catch (error) {
                table.toast(errorText(error), "error");
              }
            },
          },
          t("close_call"),
        ),
      ),
    );
  }
}

// A player's open calls: a card each at the top of the page, a notice that stays in view while
// the card is out of it, until it is answered or dismissed (on a phone the cards are a long way
// up), a line for screen readers when a call arrives, and the result of an answer where its card
// was.
export function renderPlayerCalls(table) {
  const box = $("#calls");
  if (!box) return;
  const here = (table.playerCalls ||= { seen: new Set(), dismissed: new Set(), results: [] });
  const answered = new Set(here.results.map((result) => result.key));
  const mine = new Set(table.characters.filter((c) => c.acts_for).map((c) => c.id));
  const cards = [];
  for (const call of table.calls) {
    for (const id of call.characters) {
      if (!mine.has(id) || id in call.answered || answered.has(`${call.id}:${id}`)) continue;
      cards.push({ call, id, key: `${call.id}:${id}` });
    }
  }
  for (const card of cards) {
    if (here.seen.has(card.key)) continue;
    here.seen.add(card.key);
    table.say(callLine(table, card));
  }
  renderCallNotice(table, cards.filter((card) => !here.dismissed.has(card.key) && !cardsInView.has(card.key)));
  // A result follows its roll as the feed's card does (a follow-up taken on it, a reveal).
  const shown = here.results.map((result) => table.checks.get(result.check.seq) || result.check);
  // Unchanged: keep the odds and any typed faces.
  rebuildIfChanged(box, [cards.map((card) => card.key), shown.map(lastRollKey)], () => {
    clear(box);
    for (const result of here.results) box.append(callResult(table, result));
    for (const card of cards) box.append(callCard(table, card.call, card.id));
    watchCards(table, box);
  });
}

// The calls whose card is in view: their notice would only repeat them (and cover the page's
// header on a phone). It shows again once the card is scrolled out of view.
const cardsInView = new Set();
let cardWatcher = null;

function watchCards(table, box) {
  if (!("IntersectionObserver" in window)) return;
  cardWatcher ||= new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        const key = `${entry.target.dataset.call}:${entry.target.dataset.character}`;
        if (entry.intersectionRatio >= 0.5) cardsInView.add(key);
        else cardsInView.delete(key);
      }
      renderPlayerCalls(table);
    },
    { threshold: [0, 0.5, 1] },
  );
  cardWatcher.disconnect();
  cardsInView.clear();
  for (const card of box.querySelectorAll("form.call-mine")) cardWatcher.observe(card);
}

// "Сообразительность + Оккультизм": a call's traits, as the page's language names them.
function traitsText(table, request) {
  return (request.traits || []).map((name) => traitLabel(table.campaign.system, name)).join(" + ");
}

function callLine(table, { call, id }) {
  const request = call.request || {};
  const what = request.label || traitsText(table, request);
  return `${t("gm_calls")} ${t("for_character", { name: characterName(table, id) })}${what ? `: ${what}` : ""}`;
}

function cardOf(key) {
  const [call, character] = key.split(":");
  return $(`#calls form.call-mine[data-call="${CSS.escape(call)}"][data-character="${CSS.escape(character)}"]`);
}

function bringIntoView(element) {
  element.scrollIntoView({ block: "center", behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
}

function renderCallNotice(table, cards) {
  const notice = $("#call-notice");
  if (!notice) return;
  const here = table.playerCalls;
  rebuildIfChanged(notice, cards.map((card) => [card.key, callLine(table, card)]), () => {
    clear(notice);
    for (const card of cards) {
      const answer = () => {
        const form = cardOf(card.key);
        if (!form) return;
        bringIntoView(form);
        const faces = form.querySelector("input[type=text]");
        if (faces && !faces.value.trim()) faces.focus({ preventScroll: true }); // the physical dice first
        else form.requestSubmit();
      };
      const show = () => {
        const form = cardOf(card.key);
        if (!form) return;
        bringIntoView(form);
        form.querySelector("button[type=submit]").focus({ preventScroll: true });
      };
      const dismiss = () => {
        here.dismissed.add(card.key);
        renderPlayerCalls(table);
      };
      notice.append(
        h(
          "div",
          { class: "call-notice-item", "data-call": card.call.id },
          h("p", { class: "call-notice-text" }, callLine(table, card)),
          h("button", { type: "button", class: "btn btn-small btn-primary", onclick: answer }, t("answer")),
          h("button", { type: "button", class: "btn btn-small btn-ghost", onclick: show }, t("call_show")),
          h("button", { type: "button", class: "chip-x", "aria-label": t("call_dismiss"), title: t("call_dismiss"), onclick: dismiss }, "×"),
        ),
      );
    }
  });
  notice.hidden = !cards.length;
}

function callResult(table, result) {
  const here = table.playerCalls;
  return h(
    "div",
    { class: "call-card call-result", "data-seq": result.check.seq },
    h("p", { class: "call-title" }, t("call_answered_by_you"), result.label ? ` — ${result.label}` : ""),
    lastRoll(table.checks.get(result.check.seq) || result.check),
    h(
      "button",
      {
        type: "button",
        class: "chip-x",
        "aria-label": t("call_dismiss"),
        title: t("call_dismiss"),
        onclick: () => {
          here.results = here.results.filter((r) => r !== result);
          renderPlayerCalls(table);
        },
      },
      "×",
    ),
  );
}

function callCard(table, call, characterId) {
  const name = characterName(table, characterId);
  const odds = h("div", { class: "odds-area" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const manual = Boolean((table.campaign.options || {}).manual_dice);
  const faces = manual ? h("input", { type: "text", inputmode: "numeric", id: `call-faces-${call.id}-${characterId}`, placeholder: t("faces_hint") }) : null;
  const request = { ...(call.request || {}) };
  delete request.visibility;
  delete request.label;
  table.api
    .post("checks/odds/", { ...request, character: characterId })
    .then((answer) => odds.append(oddsChart(table.campaign.system, answer, t("odds_for", { name }))))
    .catch((e) => odds.append(h("p", { class: "muted" }, e.message)));
  const button = h("button", { type: "submit", class: "btn btn-primary btn-roll" }, t("answer"));
  return h(
    "form",
    {
      class: "call-card call-mine",
      "data-call": call.id,
      "data-character": characterId,
      onsubmit: async (event) => {
        event.preventDefault();
        if (button.disabled) return;
        button.disabled = true;
        error.hidden = true;
        try {
          const body = { call: call.id, character: characterId, client_seed: clientSeed() };
          if (faces && faces.value.trim()) body.faces = faces.value.trim().split(/[\s,;]+/).map(Number);
          // Asked again after a lost answer, the call is answered once, not refused (api.post).
          const check = await table.api.post("checks/", body);
          table.showCheck(check);
          // The result where the card was, as the roll form shows one beside its button.
          table.playerCalls.results = [{ key: `${call.id}:${characterId}`, check, label: call.request?.label }, ...table.playerCalls.results].slice(0, 3);
          renderPlayerCalls(table);
          const shown = $(`#calls .call-result[data-seq="${check.seq}"]`);
          if (shown) {
            shown.scrollIntoView({ block: "nearest" });
            shown.querySelector(".last-link")?.focus({ preventScroll: true });
          }
          table.refresh.calls();
        } catch (e) {
          error.hidden = false;
          error.textContent = errorText(e, "no_connection_roll");
          button.disabled = false;
        }
      },
    },
    h("h2", { class: "call-title" }, t("gm_calls"), " ", h("span", { class: "muted" }, t("for_character", { name }))),
    call.request && call.request.label ? h("p", { class: "call-label" }, call.request.label) : null,
    odds,
    faces ? h("label", { for: faces.id }, t("faces_hint")) : null,
    faces,
    error,
    button,
  );
}

// --- rule state -------------------------------------------------------------------------------

export function renderState(table) {
  const box = $("#state");
  if (!box) return;
  const chips = table.campaign.system === "nice_damnit" ? (table.state.characters || []).map((c) => chipsThisSession(table, c.id)) : null;
  const names = table.characters.map((c) => [c.id, c.name]);
  rebuildIfChanged(box, [table.state, table.campaign.options, table.campaign.session, names, chips], () => stateBox(table, box));
}

function stateBox(table, box) {
  clear(box);
  const state = table.state;
  const system = table.campaign.system;
  const rows = (state.characters || []).map((c) => {
    const cells = [];
    for (const [name, value] of Object.entries(c.resources || {})) {
      cells.push(h("span", { class: `resource res-${name}` }, h("span", { class: "res-name" }, S.resources[name] || name), h("strong", {}, String(value))));
    }
    // The allowances the campaign's options track, as the server lists them (`flags`).
    for (const f of c.flags || []) cells.push(flag(flagLabel(f), f));
    if (system === "nice_damnit") {
      const chips = chipsThisSession(table, c.id);
      cells.push(h("span", { class: "resource" }, h("span", { class: "res-name" }, t("chips")), h("span", { class: "chip-pair" }, h("span", { class: "nice" }, `Nice! ${chips.nice}`), " · ", h("span", { class: "damnit" }, `Damnit! ${chips.damnit}`))));
    }
    return h("li", { class: "state-row", "data-character": c.id }, h("strong", { class: "state-name" }, c.name), h("span", { class: "state-cells" }, cells));
  });
  box.append(h("ul", { class: "state-list" }, rows.length ? rows : h("li", { class: "muted" }, t("no_characters"))));
  for (const f of state.table_flags || []) box.append(h("p", {}, flag(flagLabel(f, true), f)));
  if (["storyteller", "cofd"].includes(system) && table.isGm) {
    const retries = (state.retries || []).map((r) =>
      h(
        "li",
        {},
        h("span", {}, `${characterName(table, r.character)} — ${r.task}: `, h("strong", {}, t("failures", { n: r.failures }))),
        h(
          "button",
          {
            type: "button",
            class: "btn btn-small btn-ghost",
            onclick: async () => {
              try {
                await table.api.post("tasks/reset/", { character: r.character, task: r.task });
                table.refresh.state();
              } catch (error) {
                table.toast(errorText(error), "error");
              }
            },
          },
          t("reset"),
        ),
      ),
    );
    box.append(h("h3", {}, t("retries")), retries.length ? h("ul", { class: "retries" }, retries) : h("p", { class: "muted" }, t("no_retries")));
  }
}

// An allowance's name: the rule and the period it counts in, both named by the server.
export function flagLabel(f, table = false) {
  if (f.rule === "free_botch") return t(table ? "table_free_botch" : "free_botch");
  if (f.rule === "dramatic_failure") return `${t("dramatic_failure_state")} (${t(`this_${f.period}`)})`;
  return f.rule;
}

// An allowance as the server's state says it: used, available, or not to be had while no period
// it counts in is open (`open`).
export function flag(label, f) {
  const state = f.used ? "used" : f.open === false ? "closed" : "free";
  const closed = { session: "no_session_open", chapter: "no_chapter_open", scene: "no_scene_open" }[f.period];
  const text = { used: t("used"), closed: t(closed), free: t("available") }[state];
  return h("span", { class: `rule-flag ${state}` }, h("span", { class: "dot", "aria-hidden": "true" }), `${label}: ${text}`);
}

function chipsThisSession(table, characterId) {
  const session = table.campaign.session;
  let nice = 0;
  let damnit = 0;
  for (const check of table.checks.values()) {
    if (check.redacted || !session || check.session !== session.id) continue;
    for (const roll of check.data.rolls || []) {
      if (roll.character_id !== characterId) continue;
      nice += roll.result.nice || 0;
      damnit += roll.result.damnit || 0;
    }
  }
  return { nice, damnit };
}

// --- members and presence ---------------------------------------------------------------------

function onlineIds(presence) {
  if (!presence) return null;
  const list = Array.isArray(presence) ? presence : Object.values(presence);
  return new Set(list.map((p) => (typeof p === "object" && p ? p.user_id ?? p.id : p)));
}

export function renderMembers(table) {
  const box = $("#members");
  if (!box) return;
  const online = onlineIds(table.presence);
  rebuildIfChanged(box, [table.members, online && [...online].sort()], () => membersBox(table, box, online));
}

function membersBox(table, box, online) {
  clear(box);
  for (const member of table.members) {
    const here = online ? online.has(member.user_id) : null;
    const presence = h("span", {
      class: `presence ${here === null ? "unknown" : here ? "on" : "off"}`,
      title: here === null ? t("presence_unknown") : here ? t("online") : t("away"),
    });
    const parts = [presence, h("span", { class: "member-name" }, member.username, member.user_id === table.me.id ? h("small", {}, ` (${t("you")})`) : null)];
    if (here !== null) parts.push(h("span", { class: "sr-only" }, here ? t("online") : t("away")));
    if (table.isGm && member.user_id !== table.me.id) {
      const select = h(
        "select",
        {
          "aria-label": `${t("role")}: ${member.username}`,
          onchange: async (e) => {
            try {
              await table.api.patch(`members/${member.user_id}/`, { role: e.target.value });
              table.refresh.members();
            } catch (error) {
              table.toast(errorText(error), "error");
            }
          },
        },
        ["gm", "player", "observer"].map((role) => h("option", { value: role, selected: role === member.role }, S.roles[role])),
      );
      parts.push(select);
      parts.push(
        h(
          "button",
          {
            type: "button",
            class: "btn btn-small btn-ghost",
            "aria-label": `${t("remove")}: ${member.username}`,
            onclick: async () => {
              if (!confirm(t("confirm_remove", { name: member.username }))) return;
              try {
                await table.api.del(`members/${member.user_id}/`);
                table.refresh.members();
              } catch (error) {
                table.toast(errorText(error), "error");
              }
            },
          },
          "×",
        ),
      );
    } else {
      parts.push(h("span", { class: "role muted" }, S.roles[member.role] || member.role));
    }
    box.append(h("li", { class: "member", "data-user": member.user_id }, parts));
  }
  const count = online ? table.members.filter((m) => online.has(m.user_id)).length : null;
  const note = h("li", { class: "muted small presence-note" }, count === null ? t("presence_unknown") : t("connected_count", { n: count }));
  box.append(note);
}
