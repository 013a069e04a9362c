// The feed in the page: a bounded window of cards, newest first, changed one card at a time.
//
// A new roll inserts one card (the only one that animates); an event that amends a check
// replaces that card alone; a change of rule state rebuilds only the follow-up controls whose
// markup differs, carrying over what the user had chosen in them. The DOM keeps at most WINDOW
// items; older ones come back on demand ("Show older").
import { h } from "./dom.js";
import { t } from "./i18n.js";

const WINDOW = 100;

export class FeedList {
  // build(seq) -> the card or marker for seq, or null; keyOf(seq) -> a string that changes when
  // the item's content does; followups(seq) -> its controls or null;
  // loadOlder(beforeSeq) -> a promise of { seqs: the older items it loaded, more: whether
  // there may be more }.
  constructor(el, { build, keyOf, followups, loadOlder }) {
    this.el = el;
    this.build = build;
    this.keyOf = keyOf;
    this.followups = followups;
    this.loadOlder = loadOlder;
    this.cards = new Map(); // seq -> { node, key, controls }
    this.limit = WINDOW;
    this.more = h(
      "button",
      { type: "button", class: "btn btn-ghost btn-small feed-more", onclick: () => this.older() },
      t("show_older"),
    );
    this.moreBox = h("div", { class: "feed-more-row" }, this.more);
    this.empty = h("p", { class: "empty" }, t("feed_empty"));
    this.hasOlder = false;
  }

  // The first paint: every item at once, none animated.
  reset(seqs, { hasOlder }) {
    this.el.replaceChildren();
    this.cards.clear();
    this.hasOlder = hasOlder;
    const sorted = [...seqs].sort((a, b) => b - a).slice(0, this.limit);
    const nodes = [];
    for (const seq of sorted) {
      const card = this.make(seq);
      if (card) nodes.push(card.node);
    }
    this.el.append(...nodes);
    if (sorted.length < seqs.length) this.hasOlder = true;
    this.tail();
  }

  // Add or update one item. `fresh` marks a live arrival (it animates). Returns "added",
  // "replaced" or null (nothing changed).
  put(seq, { fresh = false } = {}) {
    const old = this.cards.get(seq);
    const key = this.keyOf(seq);
    if (old && old.key === key) return null;
    // Older than the whole window: it belongs to the part not shown.
    if (!old && this.hasOlder && this.cards.size && seq < this.oldest()) return null;
    const card = this.make(seq, key);
    if (!card) {
      if (old) this.drop(seq);
      return null;
    }
    if (old) {
      carryOver(old.node, card.node);
      old.node.replaceWith(card.node);
      return "replaced";
    }
    if (fresh) {
      card.node.classList.add("is-new");
      // A click on the card skips its dice animation.
      card.node.addEventListener("pointerdown", () => card.node.classList.add("settled"), { once: true });
    }
    const next = this.firstOlderThan(seq);
    if (next) next.before(card.node);
    else if (this.moreBox.isConnected) this.moreBox.before(card.node);
    else this.el.append(card.node);
    this.trim();
    this.tail();
    return "added";
  }

  // Escape skips every dice animation still running.
  settle() {
    for (const node of this.el.querySelectorAll(".is-new:not(.settled)")) node.classList.add("settled");
  }

  // The rule state changed: refresh the follow-up controls that differ, nothing else.
  refreshControls() {
    for (const [seq, card] of this.cards) {
      const controls = this.followups(seq);
      const markup = controls ? controls.outerHTML : "";
      if (markup === card.controls) continue;
      const current = card.node.querySelector(":scope > .followups");
      if (current && controls) {
        carryOver(current, controls);
        current.replaceWith(controls);
      } else if (current) current.remove();
      else if (controls) card.node.append(controls);
      card.controls = markup;
    }
  }

  seqs() {
    return [...this.cards.keys()];
  }

  oldest() {
    let min = Infinity;
    for (const seq of this.cards.keys()) min = Math.min(min, seq);
    return min === Infinity ? null : min;
  }

  // --- inside -------------------------------------------------------------------------------

  make(seq, key = this.keyOf(seq)) {
    const node = this.build(seq);
    if (!node) return null;
    const controls = node.querySelector(":scope > .followups");
    const card = { node, key, controls: controls ? controls.outerHTML : "" };
    this.cards.set(seq, card);
    return card;
  }

  drop(seq) {
    const card = this.cards.get(seq);
    if (card) card.node.remove();
    this.cards.delete(seq);
  }

  firstOlderThan(seq) {
    // Live items are nearly always the newest: look from the top.
    for (const child of this.el.children) {
      const other = Number(child.dataset.seq);
      if (child.dataset.seq && other < seq) return child;
    }
    return null;
  }

  trim() {
    while (this.cards.size > this.limit) {
      const oldest = this.oldest();
      const node = this.cards.get(oldest).node;
      // Never pull a card from under the user's hands.
      if (node.contains(document.activeElement)) break;
      this.drop(oldest);
      this.hasOlder = true;
    }
  }

  tail() {
    if (!this.cards.size) this.el.prepend(this.empty);
    else this.empty.remove();
    if (this.hasOlder) this.el.append(this.moreBox);
    else this.moreBox.remove();
  }

  async older() {
    const before = this.oldest();
    if (before === null) return;
    this.more.disabled = true;
    try {
      const { seqs: added, more } = await this.loadOlder(before);
      this.limit += added.length;
      this.hasOlder = more;
      const nodes = [];
      for (const seq of added.sort((a, b) => b - a)) {
        if (this.cards.has(seq) || seq >= before) continue;
        const card = this.make(seq);
        if (card) nodes.push(card.node);
      }
      this.moreBox.before(...nodes);
      this.tail();
      // The first older card takes the focus, so a keyboard user reads on from there.
      if (nodes.length) {
        nodes[0].setAttribute("tabindex", "-1");
        nodes[0].focus({ preventScroll: false });
      }
    } finally {
      this.more.disabled = false;
    }
  }
}

// What the user had chosen in the old controls (an open Fortune form, its selects) survives
// their replacement: the same-named fields get the same values.
function carryOver(from, to) {
  const open = [...from.querySelectorAll("details")].map((d) => d.open);
  [...to.querySelectorAll("details")].forEach((d, i) => {
    if (open[i]) d.open = true;
  });
  for (const field of from.querySelectorAll("select[name], input[name]")) {
    const twin = to.querySelector(`${field.tagName}[name="${field.name}"]`);
    if (!twin || twin.value === field.value) continue;
    if ([...(twin.options || [])].some((o) => o.value === field.value) || !twin.options) {
      twin.value = field.value;
      twin.dispatchEvent(new Event("change"));
    }
  }
  const focused = document.activeElement;
  if (focused && from.contains(focused)) {
    const name = focused.getAttribute("name");
    const twin = name ? to.querySelector(`[name="${name}"]`) : null;
    queueMicrotask(() => (twin || to.querySelector("summary, button, select"))?.focus());
  }
}
