// A tiny element builder: h("button", {class: "btn", onclick}, "Roll") — no framework needed.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElementNS(
    SVG_TAGS.has(tag) ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml",
    tag,
  );
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "text") {
      el.textContent = value;
    } else if (key === "style") {
      // Through the CSSOM: the Content-Security-Policy refuses style attributes.
      el.style.cssText = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

const SVG_TAGS = new Set(["svg", "rect", "circle", "path", "polygon", "text", "g", "line", "title"]);

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function $$(selector, root = document) {
  return Array.from(root.querySelectorAll(selector));
}

export function jsonScript(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

const shown = new WeakMap();

// Rebuild `box` only when what it shows has changed (`key`, any JSON-able value): someone else's
// event must not take away the focus, an open control or a half-typed value.
export function rebuildIfChanged(box, key, build) {
  const text = JSON.stringify(key);
  if (shown.get(box) === text) return false;
  shown.set(box, text);
  build();
  return true;
}
