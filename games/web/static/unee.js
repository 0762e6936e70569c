// The Ünee board: two rows of holes with their balls, every legal move judged under the chosen
// repetition rule, captured balls per side, best play from here and the cycle it runs into.
"use strict";

const Unee = {
  started: false,
  rule: "uncounted",
  history: [],   // [{position, captured: [south, north], move}] from the first position set
  pv: null,
  gen: 0,        // counts questions asked, so that only the newest answer is drawn

  open() {
    if (this.started) return;
    this.started = true;
    const $ = (id) => document.getElementById(id);
    $("unee-rule").addEventListener("change", (e) => { this.rule = e.target.value; this.render(); });
    $("unee-form").addEventListener("submit", (e) => { e.preventDefault(); this.set($("unee-position").value); });
    $("unee-start").addEventListener("click", () => this.set("start"));
    $("unee-undo").addEventListener("click", () => this.undo());
    $("unee-back").addEventListener("click", () => this.undo());
    $("unee-step").addEventListener("click", () => { if (this.pv && this.pv.moves.length) this.play(this.pv.moves[0]); });
    this.set("start");
  },

  get current() { return this.history[this.history.length - 1]; },

  capturedText(c) { return `${c[0]}-${c[1]}`; },

  async set(text) {
    try {
      const shown = await Api.get("unee/show", { position: text.trim() || "start" });
      this.history = [{ position: shown.position, captured: [0, 0], move: null }];
      await this.render();
    } catch (err) { Status.error(err); }
  },

  undo() {
    if (this.history.length > 1) { this.history.pop(); this.render(); }
  },

  // play a move given as {move, captured, position}; the mover adds its captures
  play(m) {
    const cur = this.current;
    const side = cur.position.trim().slice(-1);
    const captured = [...cur.captured];
    captured[side === "S" ? 0 : 1] += m.captured;
    this.history.push({ position: m.position, captured, move: m.move });
    this.render();
  },

  repeatedAt() {
    const now = this.current.position;
    return this.history.slice(0, -1).findIndex((h) => h.position === now);
  },

  async render() {
    const cur = this.current;
    document.getElementById("unee-position").value = cur.position;
    const gen = ++this.gen;
    try {
      const ask = { position: cur.position, rule: this.rule, captured: this.capturedText(cur.captured) };
      const shown = await Api.get("unee/show", { position: cur.position });
      const repeated = this.repeatedAt();
      let analysis = null, pv = null;
      if (repeated < 0) {
        [analysis, pv] = await Promise.all([Api.get("unee/analyze", ask), Api.get("unee/pv", ask)]);
      }
      if (gen !== this.gen) return;  // the answer to an older question: a newer one is on its way
      this.pv = pv;
      Status.clear();
      this.drawBoard(shown, analysis, repeated);
      this.drawMoves(analysis);
      this.drawPv(pv);
      // what the page shows, for a reader (or a test) to check against the tables
      Object.assign(document.getElementById("unee-board").dataset, { position: cur.position, rule: this.rule, captured: ask.captured });
    } catch (err) { Status.error(err); }
  },

  drawBoard(shown, analysis, repeated) {
    const board = document.getElementById("unee-board");
    board.replaceChildren();
    const cur = this.current;
    const byMove = {};
    for (const m of (analysis ? analysis.moves : [])) byMove[m.move] = m;
    const names = shown.north.length === 3 ? ["left", "middle", "right"] : shown.north.map((_, i) => `${i + 1}`);
    const row = (side, counts) => {
      const r = el("div", { class: `row ${side === shown.side ? "to-move" : ""}` });
      r.append(el("div", { class: "side-name" }, side === "N" ? "North" : "South"));
      counts.forEach((n, i) => {
        const move = `${side}-${names[i]}`;
        const info = byMove[move];
        const hole = el("button", {
          class: `hole${info ? " playable" : ""}${info && info.best ? " best" : ""}`,
          dataset: { hole: move, balls: String(n) },
          title: info ? `play ${move}` : move,
        });
        if (!info) hole.disabled = true;
        const dots = el("div", { class: "balls" });
        for (let b = 0; b < Math.min(n, 24); b++) dots.append(el("span", { class: "ball" }));
        hole.append(el("div", { class: "count" }, String(n)), dots);
        if (info) {
          hole.append(el("div", { class: "badge", title: this.badgeTitle() }, this.valueText(info)));
          hole.addEventListener("click", () => this.play(info));
        }
        r.append(hole);
      });
      const store = side === "N" ? cur.captured[1] : cur.captured[0];
      r.append(el("div", { class: "store", dataset: { captured: String(store) }, title: "captured so far" }, String(store)));
      return r;
    };
    board.append(row("N", shown.north), row("S", shown.south));
    const legend = document.getElementById("unee-legend");
    legend.textContent = this.legend();
    legend.dataset.rule = this.rule;
    const who = shown.side === "S" ? "South" : "North";
    const meaning = document.getElementById("unee-meaning");
    if (repeated >= 0) {
      meaning.textContent = `The position of ply ${repeated} repeats: the game ends by repetition.`;
      meaning.dataset.value = "";
    } else if (shown.game_over) {
      const other = shown.side === "S" ? "North" : "South";
      meaning.textContent = `${who} has no ball to sow: the game is over and the ${shown.balls} balls go to ${other}.`;
      meaning.dataset.value = "";
    } else {
      const said = analysis.meaning.charAt(0).toUpperCase() + analysis.meaning.slice(1);
      meaning.textContent = `${who} to move. ${said}`;
      meaning.dataset.value = analysis.value === null ? "" : String(analysis.value);
    }
  },

  // what the badges under the holes say, for the rule shown: the page explains them in a line under
  // the board and in each badge's tooltip
  legend() {
    const common = "The number in a hole is its balls; the boxes at the row ends hold each side's captures so far. ";
    const best = " The highlighted hole is the best move.";
    if (this.rule === "draw")
      return common + "Under each hole the side to move may sow: the result of sowing it with best play after it "
        + "(wins, draw or loses, the captures so far counted)." + best;
    if (this.rule === "split")
      return common + "Under each hole the side to move may sow: what sowing it is worth, the balls it and the rest "
        + "of the game capture for that side less those the other side captures, with best play after it; "
        + "where the split rule's value is known only within certified bounds, the range low…high." + best;
    return common + "Under each hole the side to move may sow: what sowing it is worth, the balls it and the rest "
      + "of the game capture for that side less those the other side captures, with best play after it." + best;
  },

  badgeTitle() {
    return { draw: "the result of sowing this hole, with best play after it",
      split: "what sowing this hole is worth (captures from now on, less the other side's), or its certified bounds" }[this.rule]
      || "what sowing this hole is worth: captures from now on, less the other side's, with best play";
  },

  valueText(m) {
    if (this.rule === "draw") return { 1: "wins", 0: "draw", "-1": "loses" }[m.outcome];
    if (m.value !== null) return signed(m.value);
    return `${signed(m.lower)}…${signed(m.upper)}`;
  },

  drawMoves(analysis) {
    const head = document.getElementById("unee-value-head");
    head.textContent = this.rule === "draw" ? "outcome" : this.rule === "split" ? "value (bounds)" : "value";
    document.getElementById("unee-rem-head").textContent = this.rule === "uncounted" ? "remoteness" : "";
    const body = document.querySelector("#unee-moves tbody");
    body.replaceChildren();
    for (const m of (analysis ? analysis.moves : [])) {
      const rem = m.remoteness === null ? "" : `${m.remoteness}${m.cycling ? " (cycles)" : ""}`;
      const tr = el("tr", { class: m.best ? "best" : "", dataset: { move: m.move, value: m.value === null ? "" : String(m.value) } },
        el("td", {}, m.best ? "★" : ""), el("td", {}, m.move), el("td", { class: "pos" }, m.position),
        el("td", {}, m.captured ? String(m.captured) : ""), el("td", { class: "value" }, this.valueText(m)), el("td", {}, rem));
      tr.addEventListener("click", () => this.play(m));
      body.append(tr);
    }
  },

  drawPv(pv) {
    const list = document.getElementById("unee-pv");
    const cycle = document.getElementById("unee-cycle");
    list.replaceChildren();
    cycle.textContent = "";
    if (!pv) return;
    const positions = [this.current.position, ...pv.moves.map((m) => m.position)];
    let entry = -1;
    if (pv.end === "repetition") {
      entry = positions.indexOf(positions[positions.length - 1]);
      cycle.textContent = `Best play repeats ${positions[entry]}: reached after ${entry} plies and again after ${pv.plies}, a cycle of ${pv.plies - entry} plies.`;
      cycle.dataset.entry = String(entry);
      cycle.dataset.length = String(pv.plies - entry);
    } else if (pv.end === "no-move") {
      cycle.textContent = `Best play ends after ${pv.plies} plies when the side to move has no ball.`;
    }
    pv.moves.forEach((m, i) => {
      const ply = i + 1;
      const marks = [];
      if (ply === entry) marks.push("cycle starts");
      if (entry >= 0 && ply === pv.plies) marks.push("repeats");
      const li = el("li", { class: `${entry >= 0 && ply >= entry ? "in-cycle" : ""} ${marks.length ? "repeat" : ""}`, title: "play up to here" },
        el("span", { class: "mv" }, m.move), " → ", el("span", { class: "pos" }, m.position),
        m.captured ? el("span", { class: "cap" }, ` captures ${m.captured}`) : null,
        marks.length ? el("span", { class: "mark" }, ` ${marks.join(", ")}`) : null);
      li.addEventListener("click", () => {
        for (const step of pv.moves.slice(0, ply)) {
          const side = this.current.position.trim().slice(-1);
          const captured = [...this.current.captured];
          captured[side === "S" ? 0 : 1] += step.captured;
          this.history.push({ position: step.position, captured, move: step.move });
        }
        this.render();
      });
      list.append(li);
    });
    if (entry === 0) cycle.textContent += " (the current position itself)";
  },
};

Tabs.boards.unee = Unee;
