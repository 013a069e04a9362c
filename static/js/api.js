// The REST API from the pages: session cookie, CSRF header, errors that name the field.
import { t } from "./i18n.js";

function cookie(name) {
  const match = document.cookie.match(new RegExp(`(?:^|; )${name}=([^;]*)`));
  return match ? decodeURIComponent(match[1]) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(body) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

// The server's messages without the fields they name ("session", "request.traits"): those are
// the API's paths, not words of the page. A form that has the field shows the error at it
// (errorFields).
function describe(body) {
  if (!body || typeof body !== "object") return "";
  const parts = [];
  for (const [field, value] of Object.entries(body)) {
    if (field === "code") continue;
    parts.push(Array.isArray(value) ? value.join(" ") : String(value));
  }
  return parts.join("; ");
}

// The fields an answer's errors name (dotted paths), for the forms that have them.
export function errorFields(error) {
  const body = error instanceof ApiError && error.body && typeof error.body === "object" ? error.body : {};
  return Object.keys(body).filter((field) => !["code", "detail", "non_field_errors"].includes(field));
}

// The request never reached the server, or its answer never came back (after the retries).
export function isNetworkError(error) {
  return error instanceof TypeError && !(error instanceof ApiError);
}

// A gateway's answer (nginx when a worker died or timed out, or the server busy): the write
// behind it may have been made.
const GATEWAY = new Set([502, 503, 504]);

// No answer of the server's own came: the write may have been made, or not.
export function answerLost(error) {
  return isNetworkError(error) || (error instanceof ApiError && GATEWAY.has(error.status));
}

// A fresh key per user action: the server runs a write once per key, so a retry after a lost
// answer (a network error, a busy or restarting server) cannot roll twice. Built from
// getRandomValues, which unlike randomUUID also works on a plain-HTTP LAN address.
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const RETRIES = 4;
// How long a write whose answer was lost is the same write when asked again: a retry comes
// soon after the failure; the same roll asked an hour later (a Perception check, again) is a
// roll of its own, which the kept key would answer with the old one.
const RETRY_WINDOW_MS = 10 * 60 * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function makeApi(base) {
  async function send(path, method, headers, body, signal) {
    // Network errors and a gateway's 502-504 are retried with the same key; other answers
    // are final.
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(base + path, {
          method,
          headers,
          body,
          credentials: "same-origin",
          signal,
        });
        if (!GATEWAY.has(response.status) || attempt >= RETRIES) return response;
        const wait = Number(response.headers.get("Retry-After")) || 1;
        await sleep(Math.min(wait, 5) * 1000);
      } catch (error) {
        if (error.name === "AbortError" || attempt >= RETRIES) throw error;
        await sleep(500 * 2 ** attempt);
      }
    }
  }

  // ``key``: the write's Idempotency-Key when the caller keeps one (the same write asked again
  // after its answer was lost), else a fresh one.
  async function request(path, { method = "GET", body, signal, key } = {}) {
    const headers = { Accept: "application/json" };
    if (method !== "GET") {
      headers["X-CSRFToken"] = cookie("csrftoken");
      headers["Content-Type"] = "application/json";
      headers["Idempotency-Key"] = key || idempotencyKey();
    }
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const response = await send(path, method, headers, payload, signal);
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = { detail: text.slice(0, 200) };
    }
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }

  // A POST whose every answer was lost (send's retries gave up) may have been made: asked again,
  // it goes with the key and body it was first sent with, so the server makes it once and
  // answers it (a roll is not rolled twice, a character not created twice). Two asks are one
  // write when their path and body agree but for client_seed, the fresh entropy each ask brings.
  // Only a lost answer is kept, for RETRY_WINDOW_MS: two asks in flight at once are two writes,
  // as is an ask after an answer, or long after the loss.
  const unanswered = new Map();
  async function post(path, body = {}, opts = {}) {
    const asked = path + JSON.stringify({ ...body, client_seed: null });
    const now = Date.now();
    for (const [ask, lost] of unanswered) {
      if (now - lost.at > RETRY_WINDOW_MS) unanswered.delete(ask);
    }
    const sent = unanswered.get(asked) || { body, key: idempotencyKey() };
    unanswered.delete(asked);
    try {
      return await request(path, { ...opts, method: "POST", body: sent.body, key: sent.key });
    } catch (error) {
      if (answerLost(error)) unanswered.set(asked, { ...sent, at: Date.now() });
      throw error;
    }
  }
  return {
    get: (path, opts) => request(path, { ...opts, method: "GET" }),
    post: (path, body, opts) => post(path, body ?? {}, opts),
    patch: (path, body) => request(path, { method: "PATCH", body }),
    del: (path) => request(path, { method: "DELETE" }),
  };
}

// The server's own 503 (config/outage.py: the database busy, out of connections or down; its
// JSON names a `code`, a proxy's page does not): the network is fine, and the server says why
// in the page's language. An earlier try, whose answer was lost, may still have made the write.
// What to say then, by what the page says when the network failed.
const REFUSED = {
  no_connection: "no_connection_refused",
  no_connection_roll: "no_connection_roll_refused",
  no_connection_write: "no_connection_write_refused",
};

function refusedByServer(error) {
  return error instanceof ApiError && error.status === 503 && typeof error.body?.code === "string";
}

// ``offline``: what to say when the network failed (the browser's own words are neither
// translated nor about what the user did).
export function errorText(error, offline = "no_connection") {
  if (refusedByServer(error)) return t(REFUSED[offline], { message: error.body.detail });
  if (answerLost(error)) return t(offline);
  return t("error", { message: error && error.message ? error.message : String(error) });
}
