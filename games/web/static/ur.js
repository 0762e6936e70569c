// The Ur board: the tiles of the chosen rule set with the pieces on them, the dice (chosen or
// rolled), every legal action for the roll with its value, and a gauge for the side to move.
"use strict";

const Ur = {
  started: false,
  board: null,        // /api/ur/board: tiles, rolls, sides
  history: [],        // positions, in the notation of the rule set
  roll: null,
  fort: true,
  gen: 0,             // counts questions asked, so that only the newest answer is drawn

  open() {
    if (this.started) return;
    this.started = true;
    const $ = (id) => document.getElementById(id);
    const pieces = $("ur-pieces");
    for (let k = 1; k <= 7; k++) pieces.append(el("option", { value: String(k) }, String(k)));
    // a new rule set opens at its own piece count (RoyalUr's: the rule set's; the fort rules': the
    // most answered at once), not the last one's, which it may have no table for
    $("ur-rules").addEventListener("change", () => this.load(null));
    pieces.addEventListener("change", () => this.load(pieces.value));
    $("ur-form").addEventListener("submit", (e) => { e.preventDefault(); this.set($("ur-position").value); });
    $("ur-start").addEventListener("click", () => this.set("start"));
    $("ur-undo").addEventListener("click", () => { if (this.history.length > 1) { this.history.pop(); this.roll = null; this.render(); } });
    $("ur-roll-dice").addEventListener("click", () => this.rollDice());
    this.load(null);
  },

  params(extra) {
    return { rules: this.board.rules, pieces: this.board.pieces, ...extra };
  },

  // a rule set and piece count (null: the rule set's own, for the fort rules the most pieces
  // answered at once: a cached table or a shipped opening file; else 3, which solves in seconds)
  async load(pieces) {
    const rules = document.getElementById("ur-rules").value;
    const gen = ++this.gen;
    try {
      let board = await Api.get("ur/board", { rules, pieces });
      if (rules === "fort" && pieces === null) {
        const k = board.solved.length ? Math.max(...board.solved) : 3;
        if (k !== board.pieces) board = await Api.get("ur/board", { rules, pieces: k });
      }
      if (gen !== this.gen) return;  // a later choice of rules or pieces has taken over
      this.board = board;
      this.fort = rules === "fort";
      document.getElementById("ur-pieces").value = String(board.pieces);
      this.history = ["start"];
      this.roll = null;
      await this.render();
    } catch (err) { Status.error(err); }
  },

  async set(text) {
    try {
      const shown = await Api.get("ur/show", this.params({ position: text.trim() || "start" }));
      this.history = [shown.position];
      this.roll = null;
      await this.render();
    } catch (err) { Status.error(err); }
  },

  rollDice() {
    let u = Math.random();
    for (const r of this.board.rolls) {
      u -= r.probability;
      if (u < 0) { this.choose(r.name); return; }
    }
    this.choose(this.board.rolls[this.board.rolls.length - 1].name);
  },

  choose(roll) { this.roll = roll; this.render(); },

  async render() {
    const position = this.history[this.history.length - 1];
    const gen = ++this.gen;
    try {
      const analysis = await Api.get("ur/analyze", this.params({ position }));
      document.getElementById("ur-position").value = analysis.position;
      let best = null;
      // a won game has no action to choose: the server refuses best-move there
      if (this.roll !== null && !analysis.view.game_over) best = await Api.get("ur/best-move", this.params({ position, roll: this.roll }));
      if (gen !== this.gen) return;  // the answer to an older question: a newer one is on its way
      Status.clear();
      if (analysis.view.game_over) Status.show(`the game is over: ${analysis.winner} holds all four forts and has won`, "busy");
      this.drawBoard(analysis.view);
      this.drawGauge(analysis);
      this.drawRolls(analysis);
      this.drawActions(best);
      Object.assign(document.getElementById("ur-board").dataset,
        { position: analysis.position, rules: this.board.rules, pieces: String(this.board.pieces), roll: this.roll === null ? "" : String(this.roll) });
    } catch (err) { Status.error(err); }
  },

  drawBoard(view) {
    const box = document.getElementById("ur-board");
    box.replaceChildren();
    const rows = Math.max(...this.board.tiles.map((t) => t.at[1]));
    const grid = el("div", { class: "grid", style: `grid-template-rows: repeat(${rows}, 66px)` });
    const marks = { fort: "fort", entry: "entry", royal: "royal", ishtar: "Ishtar", marduk: "Marduk", rosette: "✿" };
    for (const t of this.board.tiles) {
      const owner = view.pieces[t.name];
      const tile = el("div", {
        class: `tile ${t.roles.join(" ")} ${t.section}`,
        style: `grid-column: ${t.at[0] + 1}; grid-row: ${rows - t.at[1] + 1}`,
        dataset: { tile: t.name, piece: owner || "" },
      }, el("span", { class: "name" }, t.name), el("span", { class: "role" }, t.roles.map((r) => marks[r]).join(" ")));
      if (owner) tile.append(el("div", { class: `piece side-${owner}` }, owner));
      grid.append(tile);
    }
    box.append(grid);
    const [a, b] = this.board.sides;
    const counts = (s) => {
      const o = view.off_board[s];
      return this.fort ? `${s}: ${o.pool} in the pool` : `${s === "L" ? "light" : "dark"}: ${o.hand} in hand, ${o.borne_off} borne off`;
    };
    document.getElementById("ur-counts").textContent = `${counts(a)};  ${counts(b)}`;
  },

  drawGauge(analysis) {
    const side = { X: "X", O: "O", L: "light", D: "dark" }[analysis.to_move];
    // fort rules: the table holds V = P(win) - P(loss), endless play counting 0, so (1 + V) / 2 is
    // P(win) + P(endless) / 2; RoyalUr's rule sets give the chance of winning itself
    const p = this.fort ? (1 + analysis.value) / 2 : analysis.win_probability;
    const label = document.getElementById("ur-gauge-label");
    label.textContent = `${side} to move: ${(100 * p).toFixed(2)} %` + (this.fort ? `   (value ${analysis.value >= 0 ? "+" : ""}${analysis.value.toFixed(6)})` : "");
    label.dataset.p = String(p);
    label.dataset.value = this.fort ? String(analysis.value) : String(analysis.win_probability);
    document.getElementById("ur-gauge-fill").style.width = `${(100 * p).toFixed(2)}%`;
    document.getElementById("ur-gauge-note").textContent = this.fort
      ? "P(win) + ½ P(endless play) for the side to move, before rolling" + (this.board.pieces < 4 ? "; with fewer than 4 pieces nobody can hold four forts, so every value is 0" : "")
        + (analysis.source && analysis.source.kind === "opening-file" ? `; answered from the opening file shipped with the program (the positions within ${analysis.source.turns} turns of the start; no table for ${this.board.pieces} pieces here)` : "")
        + "; " + proofText(analysis)
      : "P(win) for the side to move, before rolling; " + proofText(analysis)
        + (analysis.source ? `; from ${sourceText(analysis.source)}` : "");
  },

  drawRolls(analysis) {
    const box = document.getElementById("ur-rolls");
    box.replaceChildren();
    const byRoll = {};
    for (const r of analysis.rolls) byRoll[String(r.roll)] = r;
    for (const r of this.board.rolls) {
      const info = byRoll[r.name];
      const v = info ? (this.fort ? signed(+info.value.toFixed(4)) : `${(100 * info.win_probability).toFixed(1)} %`) : "";
      const b = el("button", { class: `roll${String(this.roll) === r.name ? " chosen" : ""}`, dataset: { roll: r.name },
        title: info ? `best: ${info.best}` : "" },
        el("span", { class: "rname" }, r.name), el("span", { class: "rp" }, `p ${+r.probability.toFixed(4)}`), el("span", { class: "rv" }, v),
        el("span", { class: "rbest" }, info && info.best ? info.best : ""));
      b.addEventListener("click", () => this.choose(r.name));
      box.append(b);
    }
  },

  drawActions(best) {
    const body = document.querySelector("#ur-actions tbody");
    body.replaceChildren();
    document.getElementById("ur-actions-head").textContent = best ? `Actions for ${best.roll}` : "Actions (choose or roll the dice)";
    document.getElementById("ur-action-value-head").textContent = this.fort ? "value" : "P(win)";
    if (!best) return;
    const rows = best.actions;
    if (!this.fort && rows.length === 0) {
      const tr = el("tr", { class: "best", dataset: { action: "pass" } }, el("td", {}, "★"), el("td", {}, "pass (no legal move)"), el("td", {}, ""));
      tr.addEventListener("click", () => { this.history.push(best.pass_to); this.roll = null; this.render(); });
      body.append(tr);
    }
    for (const a of rows) {
      const text = this.fort ? a.action : a.text;  // RoyalUr's with what the move does: "(rolls again)"
      const value = this.fort ? signed(+a.value.toFixed(6)) : `${(100 * a.win_probability).toFixed(3)} %`;
      const tr = el("tr", { class: a.best ? "best" : "", dataset: { action: text, value: String(this.fort ? a.value : a.win_probability) } },
        el("td", {}, a.best ? "★" : ""), el("td", {}, text), el("td", { class: "value" }, value));
      const tiles = this.fort ? a.paths.flat() : a.action.split("-");
      tr.addEventListener("mouseenter", () => this.highlight(tiles, true));
      tr.addEventListener("mouseleave", () => this.highlight(tiles, false));
      tr.addEventListener("click", () => {
        if (a.wins || a.after === null) { Status.show(`${best.to_move || ""} wins with ${text}`, "busy"); return; }
        this.history.push(a.after);
        this.roll = null;
        this.render();
      });
      body.append(tr);
    }
  },

  highlight(tiles, on) {
    for (const name of tiles) {
      const t = document.querySelector(`#ur-board .tile[data-tile="${name}"]`);
      if (t) t.classList.toggle("path", on);
    }
  },
};

Tabs.boards.ur = Ur;

// where an answer came from, in words: a table's folder, an .rgu file, or an opening file
function sourceText(source) {
  if (source.kind === "opening-file")
    return `${source.shipped ? "the shipped opening file" : "the opening file " + source.file} (positions within ${source.turns} moves of the start)`;
  return source.path;
}

// whether a fort-rules value is proven: its interval, or "unproven" with the residual of the solve
function proofText(answer) {
  const sign = (x) => (x >= 0 ? "+" : "") + x.toFixed(7);
  if (answer.proven && answer.lower !== undefined)
    return answer.lower === answer.upper ? "proven exactly" : `proven between ${sign(answer.lower)} and ${sign(answer.upper)}`;
  if (answer.residual !== undefined) return `unproven (residual ${answer.residual.toPrecision(2)})`;
  if (answer.residual_below !== undefined) return `unproven (residual below ${answer.residual_below})`;
  return answer.proven ? "proven" : "unproven";
}
