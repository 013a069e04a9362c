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

function describe(body) {
  if (!body || typeof body !== "object") return "";
  const parts = [];
  for (const [field, value] of Object.entries(body)) {
    if (field === "code") continue;
    const text = Array.isArray(value) ? value.join(" ") : String(value);
    parts.push(field === "detail" || field === "non_field_errors" ? text : `${field}: ${text}`);
  }
  return parts.join("; ");
}

export function makeApi(base) {
  async function request(path, { method = "GET", body, signal } = {}) {
    const headers = { Accept: "application/json" };
    if (method !== "GET") {
      headers["X-CSRFToken"] = cookie("csrftoken");
      headers["Content-Type"] = "application/json";
    }
    const response = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
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
  return {
    get: (path, opts) => request(path, { ...opts, method: "GET" }),
    post: (path, body, opts) => request(path, { ...opts, method: "POST", body: body ?? {} }),
    patch: (path, body) => request(path, { method: "PATCH", body }),
    del: (path) => request(path, { method: "DELETE" }),
  };
}

export function errorText(error) {
  return t("error", { message: error && error.message ? error.message : String(error) });
}
