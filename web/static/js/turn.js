// The turn screen: whose turn and which phase, the photo with every die outlined, the dice as
// chips (each with its crop of the photo) to correct, the live evaluation (from the server's
// rules engine), confirm and undo, and the scorepad beside it, kept live by server-sent events.
// After a photo the verdict and the main action sit in a bar at the bottom of the screen, so a
// normal turn is two taps: the photo, then Confirm. The bar offers Confirm only for dice the
// player could trust: a die missing from the photo is asked for first, and so is a die the
// reader doubts when its other reading could change the phase's outcome or score (the server's
// rules engine says which). The turn being played is kept on the server, so a reload loses
// nothing.

import { RollAdvisor } from "./advice.js";
import { mountLearnt } from "./profile.js";
import { api, PHOTO_TYPES } from "./api.js";
import { BarGuard } from "./guard.js";
import { cameraUsable } from "./camera.js";
import { chipHtml, describe } from "./dice.js";
import { debounce, esc, toast } from "./dom.js";
import { LiveView } from "./live.js";
import { cropStyle, outlineSvg } from "./overlay.js";
import { preparePhoto } from "./photo.js";
import { pickDie } from "./picker.js";
import { Pointer, pointedBoxes, pointedSvg } from "./point.js";
import { announcementHtml, historyHtml, markPadScroll, scorepadHtml } from "./scorepad.js";

const GROUP_NAMES = { set: "Set", run: "Run", color: "One colour" };
// What the reader doubted about a die, as the question to the player.
const DOUBT_WORDS = { value: "its number", color: "its colour", die: "whether it is a die at all" };

export function renderGame(root, gameId, info) {
  const view = new TurnView(root, gameId, info);
  view.start();
  return () => view.stop();
}

class TurnView {
  constructor(root, gameId, info) {
    this.root = root;
    this.id = gameId;
    this.info = info;
    this.state = null;
    this.draft = emptyDraft(null);
    this.evaluation = null;
    this.evalSerial = 0;
    this.busy = false;
    this.events = null;
    this.stream = null;
    // The change this page has asked the server for and not yet had the answer to. The live
    // update of that change can arrive before the answer; it is this page's own, so it must
    // not be announced as a change from another device.
    this.own = null;
    this.noticeSeq = null; // the game's seq a shown message was about (it goes with that seq)
    this.endArmed = false; // "End turn" tapped: Confirm for a miss is offered
    this.guard = null; // the bar's actions wait a moment after they change (guard.js)
    this.restored = false; // the turn kept on the server was taken up (once, at the first state)
    this.evaluateSoon = debounce(() => this.evaluate(), 120);
    this.keepSoon = debounce(() => this.keepTurn(), 300);
    this.advisor = new RollAdvisor(info);
    this.onResize = debounce(() => { this.drawPhoto(); if (this.state) this.drawPadHint(); }, 150);
  }

  async start() {
    this.root.innerHTML = layout();
    this.bind();
    this.learnt = mountLearnt(this.root.querySelector(".turn"), this.id); // profile.js
    try {
      this.applyState(await api.game(this.id));
    } catch (err) {
      this.root.innerHTML = `<section class="card"><p class="error">${esc(err.message)}</p><a class="btn" href="#/">All games</a></section>`;
      return;
    }
    this.listen();
  }

  stop() {
    if (this.events) this.events.close();
    this.live.stop();
    window.removeEventListener("resize", this.onResize);
    document.body.classList.remove("has-bar");
    document.getElementById("live").hidden = true;
  }

  listen() {
    const live = document.getElementById("live");
    this.events = new EventSource(`/api/games/${encodeURIComponent(this.id)}/events`);
    this.events.addEventListener("open", () => { live.hidden = false; live.classList.remove("off"); });
    this.events.addEventListener("error", () => { live.classList.add("off"); });
    this.events.addEventListener("state", (event) => this.applyState(JSON.parse(event.data), true));
    this.events.addEventListener("deleted", () => {
      toast("This game was deleted on another device.", "error");
      location.hash = "#/";
    });
  }

  $(selector) {
    return this.root.querySelector(selector);
  }

  bind() {
    this.guard = new BarGuard(this.$("#turn-bar"));
    this.advisor.mount(this.$("#roll-bar"), this.$("#advice"), this.$("#dice"), () => { this.drawBar(); this.keepSoon(); });
    this.$("#photo-input").addEventListener("change", (event) => {
      const file = event.target.files[0];
      event.target.value = ""; // the same photo can be chosen again
      if (file) this.upload(file);
    });
    const camera = this.$("#camera-open");
    camera.hidden = !cameraUsable();
    // live.js: the view stays open from turn to turn; the photos it takes come here as any photo
    this.live = new LiveView(this.$("#camera"), {
      info: this.info, gameId: this.id, onPhoto: (file) => this.upload(file), onKept: (result) => this.took(result),
      onError: (m) => this.showError(m),
      turnLabel: () => (this.state && !this.state.over ? `${this.state.next}'s turn` : "Game over"),
    });
    camera.addEventListener("click", () => this.live.start());
    this.$("#dice").addEventListener("click", (event) => {
      const chip = event.target.closest("[data-index]");
      if (chip) this.editDie(Number(chip.dataset.index));
    });
    this.$("#add-die").addEventListener("click", () => this.addDie());
    // point.js: where a typed die lies; kept with the turn, so a reload keeps the place
    this.pointer = new Pointer(this.$("#photo"), () => { this.drawPhoto(); this.keepSoon(); });
    this.$("#overlay").addEventListener("click", (event) => {
      const shape = event.target.closest("[data-source]");
      if (!shape) return;
      const index = this.draft.dice.findIndex((d) => d.source === Number(shape.dataset.source));
      if (index >= 0) this.editDie(index);
    });
    this.$("#photo-img").addEventListener("load", () => this.drawPhoto());
    this.$("#scorepad").addEventListener("scroll", () => this.drawPadHint(), { passive: true });
    window.addEventListener("resize", this.onResize);
    this.$("#clear").addEventListener("click", () => this.resetDraft());
    this.$("#confirm").addEventListener("click", () => this.confirm());
    this.$("#end-turn").addEventListener("click", () => { this.endArmed = true; this.drawBar(); });
    this.$("#end-back").addEventListener("click", () => { this.endArmed = false; this.drawBar(); });
    this.$("#bar-add").addEventListener("click", () => this.addDie());
    this.$("#set-aside").addEventListener("click", () => { this.draft.setAside = true; this.drawDraft(); this.keepSoon(); });
    this.$("#ask-yes").addEventListener("click", () => this.answerAsk());
    this.$("#ask-fix").addEventListener("click", () => { const i = this.asked()[0]; if (i !== undefined) this.editDie(i); });
    this.$("#undo").addEventListener("click", () => this.undo());
    this.$("#undo-result").addEventListener("click", () => this.undo());
    this.$("#print").addEventListener("click", () => window.print());
    this.$("#to-pad").addEventListener("click", () => this.$(".pad").scrollIntoView({ behavior: "smooth" }));
  }

  // --- state from the server ---------------------------------------------------------

  applyState(state, fromStream = false) {
    const changed = !this.state || this.state.seq !== state.seq;
    const hadDraft = this.draft.dice.length > 0;
    this.state = state;
    if (changed && this.learnt && fromStream) this.learnt(); // a confirm or undo elsewhere changes what was learnt
    if (changed) {
      // A message about the game as it was (a refused confirm, a change elsewhere) no longer
      // applies once the game has moved on.
      if (this.noticeSeq !== null && this.noticeSeq !== state.seq) this.showError("");
      const ours = fromStream && this.own && this.own.matches(state);
      if (fromStream && !ours && hadDraft && this.draft.seq !== state.seq) {
        this.showError("The scorepad changed on another device, so these dice were cleared. It is now "
          + (state.next ? `${state.next}'s turn.` : "the end of the game."), state.seq);
      }
      if (this.draft.seq !== state.seq) {
        this.draft = emptyDraft(state.seq);
        this.evaluation = null;
        if (this.state.seq !== this.resultSeq) this.showResult("");
      }
    }
    if (!this.restored && !fromStream) this.restore(state);
    this.drawHeader();
    this.drawPad();
    this.drawDraft();
    this.evaluateSoon();
  }

  drawHeader() {
    const s = this.state;
    const over = s.over;
    this.$("#turn-controls").hidden = over;
    this.$("#who").innerHTML = over
      ? `<p class="label">Game over</p><h1 class="player-name">${s.winners.map(esc).join(" & ")}</h1><p class="phase-line">${s.winners.length > 1 ? "share the win" : "wins"}</p>`
      : `<p class="label">${s.in_last_chances ? "Last chance" : "Now playing"}${s.mode === "solitaire" ? " · solitaire" : ""}</p>
         <h1 class="player-name" id="current-player">${esc(s.next)}</h1>
         <p class="phase-line"><span class="phase-number" id="current-phase">Phase ${s.phase}</span>
         <span class="phase-name">${phaseNameHtml(this.info.phases[s.phase - 1].name)}</span></p>`;
    this.$("#undo").disabled = s.attempts.length === 0;
    const base = `/api/games/${encodeURIComponent(this.id)}`;
    this.$("#export-csv").href = `${base}/scorepad.csv`;
    this.$("#export-json").href = `${base}?download=1`;
  }

  drawPad() {
    this.$("#announce").innerHTML = announcementHtml(this.state, this.info);
    this.$("#scorepad").innerHTML = scorepadHtml(this.state, this.info);
    this.$("#history").innerHTML = historyHtml(this.state);
    this.drawPadHint();
  }

  drawPadHint() {
    markPadScroll(this.$("#scorepad"), this.$("#pad-scroll"), this.$("#pad-hint"), this.state.players.length);
  }

  // --- the draft: dice being entered for this turn -------------------------------------------

  drawDraft() {
    const d = this.draft;
    const groups = groupLetters(this.evaluation, d.dice.length);
    const complete = this.evaluation && this.evaluation.complete;
    const asked = new Set(this.asked());
    this.$("#dice").innerHTML = d.dice.map((die, i) => {
      const read = d.photo && die.source !== null ? d.photo.reading.dice[die.source] : null;
      return chipHtml(die.token, {
        index: i, uncertain: asked.has(i), doubted: die.uncertain && !die.checked && !asked.has(i),
        group: groups[i], unused: complete && !groups[i],
        crop: read ? cropStyle(d.photo.url, d.photo.reading, read.box) : null,
        number: d.photo ? i + 1 : null,
      });
    }).join("");
    this.$("#add-die").disabled = d.dice.length >= this.info.dice_count;
    const ask = asked.size;
    const quiet = d.dice.filter((x, i) => x.uncertain && !x.checked && !asked.has(i)).length;
    this.$("#uncertain-note").hidden = ask === 0;
    this.$("#uncertain-note").textContent = ask === 1
      ? "1 die to check: the reader is unsure of the one marked ?, and it could change this phase's result."
      : `${ask} dice to check: the reader is unsure of the ones marked ?, and they could change this phase's result.`;
    this.$("#quiet-note").hidden = quiet === 0;
    this.$("#quiet-note").textContent = `${quiet === 1 ? "1 die" : `${quiet} dice`} the reader was unsure of (dashed) cannot change this phase's result.`;
    // A die the reader missed carries no flag of its own, so after a photo say when dice are
    // short of the set: the final dice of a turn are all ten.
    const missing = this.missing();
    this.$("#count-note").hidden = missing <= 0;
    this.$("#count-note").textContent = missing === 1
      ? `${d.dice.length} of ${this.info.dice_count} dice: if one was missed or is out of the photo, add it with +.`
      : `${d.dice.length} of ${this.info.dice_count} dice: if some were missed or are out of the photo, add them with +.`;
    this.$("#clear").disabled = d.dice.length === 0 && !d.photo;
    this.drawPhoto();
    this.drawEvaluation();
    this.advisor.update(this.state, d.dice.map((x) => x.token), this.rollVerdict());
    this.drawBar();
  }

  // The dice still to ask about: doubted, not yet checked, and worth it (the server says).
  asked() {
    const ev = this.evaluation;
    if (!ev || !ev.ask) return [];
    return ev.ask.filter((i) => this.draft.dice[i] && !this.draft.dice[i].checked);
  }

  // Dice the photo lacks, unless the player said they are set aside.
  missing() {
    const d = this.draft;
    return d.photo && !d.setAside ? Math.max(0, this.info.dice_count - d.dice.length) : 0;
  }

  // Whether the set can show these dice at once, once the server has said so for these dice.
  rollVerdict() {
    const ev = this.evaluation;
    if (!ev || !ev.roll || ev.pending) return null;
    const now = this.draft.dice.map((x) => x.token);
    return sameTokens(ev.tokens, now) ? ev.roll : null;
  }

  drawPhoto() {
    const box = this.$("#photo");
    const photo = this.draft.photo;
    this.pointer.forget(this.draft.dice, photo);
    box.hidden = !photo;
    if (!photo) return;
    const img = this.$("#photo-img");
    const { width, height } = photo.reading;
    if (img.getAttribute("src") !== photo.url) {
      // The size first, so the layout (and the outlines' scale) is right before it loads.
      img.width = width;
      img.height = height;
      img.src = photo.url;
    }
    const svg = this.$("#overlay");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const shown = svg.getBoundingClientRect();
    const scale = Math.min(shown.width / width, shown.height / height) || 1 / 10;
    svg.innerHTML = outlineSvg(photo.reading, this.draft.dice, scale, describe) + pointedSvg(this.draft.dice, scale);
    const fromPhoto = this.draft.dice.filter((die) => die.source !== null);
    const unsure = this.asked().length;
    // Only what the reader is sure of counts as found: the rest is for the player to check.
    this.$("#photo-note").textContent = `${countText(fromPhoto.length)} read${unsure ? `, ${unsure} to check` : ""} · ${Math.round(photo.reading.ms)} ms`;
  }

  drawEvaluation() {
    const box = this.$("#evaluation");
    const verdict = this.$("#verdict");
    const confirm = this.$("#confirm");
    const ev = this.evaluation;
    const dice = this.draft.dice;
    if (!dice.length || !this.state || this.state.over) {
      box.className = "evaluation";
      box.innerHTML = `<p class="muted">Take a photo of the dice, or add them by hand.</p>`;
      verdict.className = "verdict";
      verdict.textContent = "";
      confirm.disabled = true;
      confirm.textContent = "Confirm";
      return;
    }
    if (!ev || ev.pending) {
      box.className = "evaluation pending";
      box.innerHTML = `<p class="muted">Scoring…</p>`;
      verdict.className = "verdict pending";
      verdict.textContent = "Scoring…";
      confirm.disabled = true;
      return;
    }
    // Faces the set cannot show at once are no roll: the server would refuse to record them.
    const problem = ev.error || (ev.roll && !ev.roll.possible ? `${ev.roll.reason} Correct the dice.` : "");
    if (problem) {
      box.className = "evaluation bad";
      box.innerHTML = `<p>${esc(problem)}</p>`;
      verdict.className = "verdict bad";
      verdict.textContent = problem;
      confirm.disabled = true;
      return;
    }
    const groups = ev.groups.map((g, gi) => {
      const letter = String.fromCharCode(65 + gi);
      const chips = g.dice.map((i, k) => {
        const token = dice[i].token;
        const chip = chipHtml(token, { small: true });
        // A wild shows what it stands for under it, never as "=7" between two chips.
        return token.startsWith("W") && g.stands_for[k] !== null
          ? `<span class="wild-as">${chip}<span class="as">as ${esc(g.stands_for[k])}</span></span>`
          : chip;
      }).join("");
      return `<li><span class="group-tag">${letter}</span> ${GROUP_NAMES[g.kind] || g.kind} of ${g.dice.length} <span class="group-dice">${chips}</span></li>`;
    }).join("");
    if (ev.complete) {
      box.className = "evaluation good";
      box.innerHTML = `<ul class="groups">${groups}</ul>`;
      verdict.className = "verdict good";
      verdict.innerHTML = `✓ Phase ${ev.phase} complete · <strong>${ev.score}</strong> points`;
      confirm.textContent = `Confirm: Phase ${ev.phase} made, ${ev.score}`;
    } else {
      box.className = "evaluation bad";
      box.innerHTML = groups ? `<ul class="groups">${groups}</ul>` : `<p class="muted">No group of the phase in these dice yet.</p>`;
      verdict.className = "verdict bad";
      verdict.textContent = `✗ Phase ${ev.phase} not complete with these dice`;
      confirm.textContent = `Confirm: Phase ${ev.phase} missed`;
    }
    confirm.disabled = this.busy;
  }

  // The bar at the bottom: the verdict and the turn's main action. With rolls left and the
  // phase not made, the main action is the next roll; ending the turn as a miss is a second,
  // deliberate step ("End turn", then Confirm).
  drawBar() {
    const bar = this.$("#turn-bar");
    const s = this.state;
    const shown = !!s && !s.over && this.draft.dice.length > 0;
    bar.hidden = !shown;
    document.body.classList.toggle("has-bar", shown);
    if (!shown) {
      this.endArmed = false;
      this.guard.changed([]);
      return;
    }
    const ev = this.evaluation;
    const made = !!ev && !!ev.complete;
    const roll = this.advisor.roll;
    const rollsLeft = roll < this.advisor.finalRoll;
    if (made || !rollsLeft) this.endArmed = false;
    const missing = this.missing();
    const asked = this.asked();
    // Confirm only for dice the player could trust: first the dice missing from the photo,
    // then the doubts that could change the result.
    const mode = missing > 0 ? "missing" : (made || !rollsLeft || this.endArmed) && asked.length ? "ask" : "play";
    const offerConfirm = mode === "play" && (made || !rollsLeft || this.endArmed);
    const next = this.$("#next-roll");
    next.hidden = mode === "missing" || !rollsLeft || this.endArmed;
    next.classList.toggle("primary", !made);
    next.classList.toggle("big", !made);
    next.querySelector("span").textContent = made ? `Roll ${roll + 1}` : `Photo of roll ${roll + 1}`;
    this.$("#end-turn").hidden = mode === "missing" || !rollsLeft || made || this.endArmed;
    this.$("#end-back").hidden = !this.endArmed || mode === "missing";
    this.$("#bar-add").hidden = mode !== "missing";
    this.$("#set-aside").hidden = mode !== "missing";
    this.$("#ask-yes").hidden = mode !== "ask";
    this.$("#ask-fix").hidden = mode !== "ask";
    const confirm = this.$("#confirm");
    confirm.hidden = !offerConfirm;
    confirm.classList.toggle("danger", !made);
    const question = this.$("#bar-question");
    question.hidden = mode === "play";
    if (mode === "missing") {
      question.textContent = `${this.draft.dice.length} of ${this.info.dice_count} dice in the photo: add ${missing === 1 ? "the missing die" : `the ${missing} missing dice`}, or say ${missing === 1 ? "it is" : "they are"} set aside.`;
      this.$("#bar-add").textContent = missing === 1 ? "+ Add the missing die" : `+ Add a missing die (${missing})`;
    } else if (mode === "ask") {
      const i = asked[0];
      const die = this.draft.dice[i];
      const read = this.draft.photo && die.source !== null ? this.draft.photo.reading.dice[die.source] : null;
      const doubt = (read && read.doubt) || "value";
      question.textContent = `Die ${i + 1}: is it ${describe(die.token)}? The reader is unsure of ${DOUBT_WORDS[doubt] || DOUBT_WORDS.value}, and it could change the result.`;
      this.$("#ask-yes").textContent = doubt === "die" ? "✓ It is a die" : `✓ Yes, ${describe(die.token)}`;
    }
    // What the bar offers changed: its buttons wait a moment, so a second tap of a double tap
    // cannot land on an action the player has not seen (guard.js). While the dice are being
    // scored Confirm is disabled: the offer is the one that comes with the verdict.
    if (!ev || ev.pending) return;
    this.guard.changed([mode, asked[0], made,
      ...[...bar.querySelectorAll(".bar-actions > *")].filter((b) => !b.hidden).map((b) => b.id)]);
  }

  async evaluate() {
    const s = this.state;
    const dice = this.draft.dice.map((d) => d.token);
    if (!s || s.over || !dice.length) {
      this.evaluation = null;
      this.drawDraft();
      return;
    }
    const serial = ++this.evalSerial;
    try {
      const ev = await api.evaluate(s.phase, dice, s.rules, this.doubts());
      ev.tokens = dice;
      if (serial === this.evalSerial) this.evaluation = ev;
    } catch (err) {
      if (serial === this.evalSerial) this.evaluation = { error: err.message };
    }
    if (serial === this.evalSerial) this.drawDraft();
  }

  // The reader's doubts about the dice not yet checked, as the server weighs them: each with
  // what it doubts, its runner-up and the reader's confidence (companion/rules/doubts.py).
  doubts() {
    const d = this.draft;
    if (!d.photo) return [];
    return d.dice.map((die, index) => {
      const read = die.source !== null ? d.photo.reading.dice[die.source] : null;
      if (!read || die.checked || !(die.uncertain || read.doubt)) return null;
      return { index, doubt: read.doubt || null, runner_up: read.runner_up || null, confidence: read.confidence ?? null };
    }).filter((x) => x);
  }

  // The first die asked about is right as read: the player checked it.
  answerAsk() {
    const i = this.asked()[0];
    if (i === undefined) return;
    this.draft.dice[i].checked = true;
    this.drawDraft();
    this.keepSoon();
  }

  // `now`: ask at once (a photo's dice arrive all together; taps are gathered a moment first).
  changed(now = false) {
    this.keepSoon();
    // Until the server answers, the old verdict must not be confirmed; an answer already on
    // its way is for the old dice (its groups may name a die just removed), so it is dropped.
    this.evalSerial++;
    this.evaluation = { pending: true };
    this.drawDraft();
    if (now) this.evaluate();
    else this.evaluateSoon();
  }

  resetDraft() {
    this.draft = emptyDraft(this.state ? this.state.seq : null);
    this.evaluation = null;
    this.showError("");
    this.drawDraft();
    this.keepSoon();
  }

  // --- the turn kept on the server ---------------------------------------------------------

  // Keep the turn being played on the server (photo, roll, dice), so a reload loses nothing.
  async keepTurn() {
    const s = this.state;
    const d = this.draft;
    if (!s || s.over || d.seq !== s.seq) return;
    if (this.busy || this.own) {
      this.keepSoon(); // a confirm or undo on its way: the turn it would keep is ending
      return;
    }
    const body = {
      seq: d.seq, roll: this.advisor.roll, photo_id: d.photo ? d.photo.id : null, set_aside: !!d.setAside,
      dice: d.dice.map((x) => ({ token: x.token, source: x.source, checked: !!x.checked,
        box: x.source === null && x.box ? x.box : null })),
    };
    try {
      await api.keepTurn(this.id, body);
    } catch (err) {
      // not kept (the turn was confirmed meanwhile, or the server is away): the page still has it
    }
  }

  // Take up the turn as this or another page left it (the first state after the page opens).
  restore(state) {
    this.restored = true;
    const turn = state.turn;
    if (!turn || state.over) return;
    const photo = turn.photo;
    const reading = photo ? photo.reading : null;
    this.draft = {
      seq: state.seq,
      photos: photo ? 1 : 0,
      photo,
      setAside: !!turn.set_aside,
      dice: turn.dice.map((x) => ({ token: x.token, source: x.source, checked: !!x.checked,
        ...(x.box ? { box: x.box } : {}),
        uncertain: !!(reading && x.source !== null && reading.dice[x.source] && reading.dice[x.source].uncertain) })),
    };
    this.advisor.resume(state.seq, turn.roll);
    this.evaluation = this.draft.dice.length ? { pending: true } : null;
  }

  async editDie(index) {
    const die = this.draft.dice[index];
    const result = await pickDie(this.info, { token: die.token, title: `Die ${index + 1}: ${describe(die.token)}` });
    if (!result) return;
    if (result.remove) this.draft.dice.splice(index, 1);
    else this.draft.dice[index] = { ...die, token: result.token, checked: true };
    this.changed();
  }

  async addDie() {
    if (this.draft.dice.length >= this.info.dice_count) return;
    const result = await pickDie(this.info, { title: `Add die ${this.draft.dice.length + 1}`, canRemove: false });
    if (!result || !result.token) return;
    this.showError("");
    const die = { token: result.token, source: null, uncertain: false, checked: true };
    this.draft.dice.push(die);
    this.changed();
    if (this.draft.photo) this.pointer.ask(die, this.draft.photo.reading, this.draft.dice.length);
  }

  // --- photos ---------------------------------------------------------------------------

  async upload(chosen) {
    this.showError("");
    this.setBusy(true, "Reading the dice…");
    try {
      // Downscaled here to what the reader uses: a 12 MP photo need not travel whole.
      const file = await preparePhoto(chosen, this.info.photo_long_side);
      if (file.size > this.info.max_upload_bytes) {
        this.showError(`This photo is ${(file.size / 2 ** 20).toFixed(0)} MB, over the ${Math.round(this.info.max_upload_bytes / 2 ** 20)} MB limit. Nothing was changed.`);
        return;
      }
      this.took(await api.uploadPhoto(this.id, file));
    } catch (err) {
      this.showError(err.message);
    } finally {
      this.setBusy(false);
    }
  }

  // A photo read and kept on the server (an upload's answer, or the live view's held photo kept).
  took(result) {
    const seq = this.state.seq;
    const sameTurn = this.draft.seq === seq;
    const photos = sameTurn ? this.draft.photos : 0;
    // Dice already showing this turn (read or typed) were a roll: this photo is the next.
    const further = sameTurn && (photos > 0 || this.draft.dice.length > 0);
    this.draft = {
      seq,
      photos: photos + 1,
      photo: { id: result.photo_id, url: result.url, reading: result.reading },
      setAside: false,
      dice: result.reading.dice.slice(0, this.info.dice_count).map((d, i) => ({ token: d.token, source: i, uncertain: !!(d.uncertain || d.doubt), checked: false })),
    };
    this.endArmed = false;
    // A further photo in the turn is the next roll (the player can still set it back).
    if (further) this.advisor.nextRoll();
    if (!result.reading.dice.length) this.showError("No dice were found in this photo. Try again from straight above, or add the dice by hand.");
    this.changed(true);
  }

  // --- confirm and undo -------------------------------------------------------------------

  async confirm() {
    const s = this.state;
    const d = this.draft;
    if (!d.dice.length || this.busy) return;
    this.setBusy(true, "Recording…");
    const body = { player: s.next, seq: d.seq, dice: d.dice.map((x) => x.token) };
    if (d.photo) {
      body.photo_id = d.photo.id;
      body.sources = d.dice.map((x) => x.source);
      body.checked = d.dice.map((x) => !!x.checked); // learning tells a checked die from a guess
      body.boxes = pointedBoxes(d.dice);
    }
    this.own = ownRecord(body);
    try {
      const result = await api.record(this.id, body);
      const a = result.attempt;
      this.own = null;
      this.draft = emptyDraft(result.game.seq);
      this.evaluation = null;
      this.applyState(result.game);
      this.showError("");
      if (result.dice_set && this.learnt) this.learnt(result.dice_set); // learnt before the reply
      // The next player's name and the camera button are at the top of the turn screen; the
      // result stays in the turn card (a toast would cover Undo).
      window.scrollTo({ top: 0 });
      this.showResult(`${a.player}: Phase ${a.phase} ${a.made ? `made, ${a.score} points` : "missed"}.`, result.game.seq);
    } catch (err) {
      this.own = null;
      if (err.status === 409) this.applyState(await api.game(this.id));
      this.showError(err.message, this.state.seq);
    } finally {
      this.own = null;
      this.setBusy(false);
    }
  }

  async undo() {
    const last = this.state.attempts[this.state.attempts.length - 1];
    if (!last) return;
    if (!confirm(`Undo ${last.player}'s attempt at Phase ${last.phase} (${last.made ? `made, ${last.score}` : "missed"})?`)) return;
    this.own = ownUndo(last.seq);
    try {
      const result = await api.undo(this.id, last.seq);
      this.own = null;
      this.applyState(result.game);
      if (this.learnt) this.learnt(); // what its photo taught is forgotten with it
      window.scrollTo({ top: 0 });
      this.showResult(`Undone: ${last.player}'s attempt at Phase ${last.phase}.`, result.game.seq, false);
    } catch (err) {
      this.own = null;
      toast(err.message, "error");
      this.applyState(await api.game(this.id));
    } finally {
      this.own = null;
    }
  }

  setBusy(busy, message = "") {
    this.busy = busy;
    const status = this.$("#busy");
    status.hidden = !busy;
    status.textContent = message;
    const ev = this.evaluation;
    this.$("#confirm").disabled = busy || !ev || !!ev.error || !!ev.pending || (!!ev.roll && !ev.roll.possible);
  }

  // The last confirm's or undo's result, with Undo beside it, until the next turn's dice.
  showResult(message, seq = null, undoable = true) {
    this.resultSeq = seq;
    const box = this.$("#result");
    box.hidden = !message;
    this.$("#result-text").textContent = message;
    this.$("#undo-result").hidden = !undoable;
  }

  // `seq`: the game's seq the message is about; it is taken down when the game moves on.
  showError(message, seq = null) {
    const box = this.$("#turn-error");
    box.textContent = message;
    box.hidden = !message;
    this.noticeSeq = message ? seq : null;
  }
}

// This page's own attempt, as the live update will show it.
function ownRecord(body) {
  return {
    matches: (state) => state.attempts.some((a) => a.seq === body.seq && a.player === body.player
      && a.dice.length === body.dice.length && a.dice.every((t, i) => t === body.dice[i])),
  };
}

// This page's own undo of the attempt numbered `seq`.
function ownUndo(seq) {
  return { matches: (state) => state.seq === seq && !state.attempts.some((a) => a.seq === seq) };
}

function emptyDraft(seq) {
  return { seq, photos: 0, photo: null, dice: [], setAside: false };
}

function sameTokens(a, b) {
  return !!a && a.length === b.length && a.every((t, i) => t === b[i]);
}

function countText(n) {
  return `${n} ${n === 1 ? "die" : "dice"}`;
}

// A phase name breaks only between its groups, so no word is left alone on a line
// ("1 set of 3 + 1 run of" / "4").
function phaseNameHtml(name) {
  return name.split(" + ").map((part) => `<span class="nowrap">${esc(part)}</span>`).join(" + ");
}

function groupLetters(evaluation, count) {
  const letters = new Array(count).fill(null);
  if (!evaluation || !evaluation.groups) return letters;
  evaluation.groups.forEach((g, gi) => g.dice.forEach((i) => { if (i < count) letters[i] = String.fromCharCode(65 + gi); }));
  return letters;
}

function layout() {
  return `
  <div class="game-layout">
    <section class="card turn" aria-label="Turn">
      <div class="who" id="who"></div>
      <p class="result" id="result" role="status" hidden><span id="result-text"></span>
        <button type="button" class="btn" id="undo-result">↶ Undo</button></p>
      <div id="turn-controls">
        <div class="photo-actions">
          <label class="btn primary big" id="take-photo">
            <input type="file" accept="${PHOTO_TYPES}" capture="environment" id="photo-input" class="visually-hidden">
            Take photo
          </label>
          <button type="button" class="btn big" id="camera-open">Live camera</button>
        </div>
        <div class="roll-bar" id="roll-bar"></div>
        <div class="camera" id="camera" hidden></div>
        <p class="busy" id="busy" role="status" hidden></p>
        <p class="error" id="turn-error" role="alert" hidden></p>
        <p class="uncertain-note" id="uncertain-note" hidden></p>
        <p class="uncertain-note" id="count-note" hidden></p>
        <p class="quiet-note muted" id="quiet-note" hidden></p>
        <h2 class="sub">Dice <span class="muted">(tap one to correct it)</span></h2>
        <div class="dice-row">
          <div class="dice" id="dice" aria-label="The dice of this attempt"></div>
          <button type="button" class="chip add" id="add-die" aria-label="Add a die by hand">+</button>
        </div>
        <div class="evaluation" id="evaluation" aria-live="polite"></div>
        <figure class="photo" id="photo" hidden>
          <div class="photo-wrap"><img id="photo-img" alt="The dice photo"><svg id="overlay" preserveAspectRatio="xMidYMid meet" aria-label="Dice found"></svg></div>
          <figcaption class="muted" id="photo-note"></figcaption>
        </figure>
        <!-- The roll advisor (companion.advisor): advice for the current roll. -->
        <div class="advice" id="advice" hidden></div>
        <div class="actions">
          <button type="button" class="btn" id="clear">Clear dice</button>
        </div>
      </div>
      <div class="actions secondary">
        <button type="button" class="btn" id="undo">↶ Undo last attempt</button>
        <button type="button" class="btn phone-only" id="to-pad">Scorepad ↓</button>
        <a class="btn" href="#/">All games</a>
      </div>
    </section>
    <section class="card pad" aria-label="Scorepad">
      <h2>Scorepad</h2>
      <div class="export" role="group" aria-label="Take the scorepad home">
        <button type="button" class="btn" id="print">Print</button>
        <a class="btn" id="export-csv" download>CSV</a>
        <a class="btn" id="export-json" download>Game file</a>
      </div>
      <div id="announce"></div>
      <p class="scroll-hint" id="pad-hint" hidden></p>
      <div class="pad-scroll" id="pad-scroll"><div class="table-wrap" id="scorepad"></div></div>
      <h3>Latest attempts</h3>
      <div id="history"></div>
    </section>
  </div>
  <div class="turn-bar" id="turn-bar" role="region" aria-label="This attempt" hidden>
    <p class="verdict" id="verdict" aria-live="polite"></p>
    <p class="bar-question" id="bar-question" role="alert" hidden></p>
    <div class="bar-actions">
      <button type="button" class="btn" id="set-aside" hidden>Set aside</button>
      <button type="button" class="btn primary big" id="bar-add" hidden>+ Add the missing die</button>
      <button type="button" class="btn" id="ask-fix" hidden>Correct it</button>
      <button type="button" class="btn primary big" id="ask-yes" hidden>✓ Right</button>
      <label class="btn" id="next-roll" for="photo-input"><span>Photo of roll 2</span></label>
      <button type="button" class="btn" id="end-turn">End turn…</button>
      <button type="button" class="btn" id="end-back">Back</button>
      <button type="button" class="btn primary big" id="confirm" disabled>Confirm</button>
    </div>
  </div>`;
}
