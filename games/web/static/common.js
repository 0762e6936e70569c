// What both boards share: calling the API (waiting out a table that is being built, with its
// progress shown), the status line and the tabs.
"use strict";

const Api = {
  // GET /api/<path>?params; resolves to the JSON answer, rejects with the server's one-line message.
  async get(path, params) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== null && v !== undefined && v !== "") query.set(k, v);
    }
    for (;;) {
      const res = await fetch(`/api/${path}?${query}`);
      const body = await res.json();
      if (res.status === 202) {  // the table is being built: follow its progress, then ask again
        await Api.follow(body.progress, body.building);
        continue;
      }
      if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
      return body;
    }
  },

  async follow(url, job) {
    for (;;) {
      Status.progress(job);
      if (job.state === "done") break;
      if (job.state === "failed") throw new Error(job.error || "building the table failed");
      await new Promise((r) => setTimeout(r, 400));
      job = await (await fetch(url)).json();
    }
    Status.clear();
  },
};

const Status = {
  el: () => document.getElementById("status"),
  show(text, kind) {
    const el = Status.el();
    el.textContent = text;
    el.className = kind || "";
    el.hidden = false;
  },
  error(err) { Status.show(err.message || String(err), "error"); },
  progress(job) {
    const share = job.total ? ` ${Math.floor((100 * job.done) / job.total)} %` : "";
    Status.show(`building the table for ${job.what} (first use):${share} ${job.note || ""} (${job.seconds} s)`, "busy");
  },
  clear() { Status.el().hidden = true; },
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function signed(x) { return x > 0 ? `+${x}` : `${x}`; }

const Tabs = {
  boards: {},
  show(name) {
    for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
    for (const p of document.querySelectorAll(".panel")) p.hidden = p.id !== name;
    if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
    Status.clear();
    Tabs.boards[name].open();
  },
};

window.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => Tabs.show(b.dataset.tab));
  Tabs.show(location.hash === "#ur" ? "ur" : "unee");
});
